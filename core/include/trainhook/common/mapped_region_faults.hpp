// A file mapped into memory that shrinks (truncated, or rewritten in place by
// another program) turns a read of its lost tail into SIGBUS, which would end
// the run as a bare "Bus error". The mappings of data files are registered
// here; a SIGBUS whose address falls in one ends the process with a message
// naming the file, its size when mapped and now, and the offset read (and the
// same in torchrun's error file, fatal_error_file.hpp). Any other SIGBUS goes
// on to the handler installed before (the crash handler's, ASan's, or the
// default). The table and the report are async-signal-safe.
#pragma once

#include <cstdint>

namespace trainhook {

// The exit status after a mapped file changed under the run: that of any
// error that stops a run (1), so launchers treat it as a failure, not a crash.
constexpr int kMappedFileChangedStatus = 1;

// Adds [begin, begin + size) as mapping `file` (copied). Installs the SIGBUS
// handler on the first call. Up to 4096 mappings at once; past that a
// mapping is not named (a SIGBUS there stays a crash).
void register_mapped_region(const void* begin, uint64_t size, const char* file) noexcept;
// Removes the mapping that starts at `begin` (before munmap).
void unregister_mapped_region(const void* begin) noexcept;

// When `info` (a siginfo_t*) is a kernel SIGBUS in a registered mapping:
// writes the message, the error file, and ends the process with
// kMappedFileChangedStatus. Returns otherwise. For other SIGBUS handlers
// (crash_handler.cpp calls it first, whichever was installed last).
void report_mapped_region_fault(int sig, const void* info) noexcept;

}  // namespace trainhook
