// Writing a message from a signal handler: write(2) only, no allocation, no
// locks (the crash handler and the SIGINT/SIGTERM guard share it).
#pragma once

namespace trainhook {

// Writes the NUL-terminated text to stderr, retrying short writes; gives up
// silently on an error (there is nowhere left to report it).
void write_stderr_signal_safe(const char* text) noexcept;

}  // namespace trainhook
