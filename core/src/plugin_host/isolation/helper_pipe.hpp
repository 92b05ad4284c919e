// The pipes and the exit check of a helper process the trainer starts and
// watches with poll(): the plugin scanner (registry/plugin_scan.cpp) and the
// plugin checker (check/plugin_check.cpp) read a helper's answer and the tail
// of what it printed, and notice its exit, without ever blocking on it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace trainhook::detail {

// Both ends close-on-exec (the child's end is dup2'ed to a fixed number by the
// spawn); the read end does not block, since a process the plugin started may
// hold the write end open after the helper is gone. Throws PluginError naming
// `purpose` ("the plugin scanner") when no pipe can be made.
struct HelperPipe {
  explicit HelperPipe(const char* purpose);
  ~HelperPipe();
  HelperPipe(const HelperPipe&) = delete;
  HelperPipe& operator=(const HelperPipe&) = delete;
  void close_read();
  void close_write();

  int read = -1;
  int write = -1;
};

// Reads what is available on fd into out, keeping at most `keep` bytes: the
// first ones (an answer) or, with keep_tail, the last ones (printed output).
// False at end of file or on an error.
bool drain_pipe(int fd, std::string& out, size_t keep, bool keep_tail);

// Whether `pid` has exited, without reaping it: its process group id stays
// taken until waitpid, so kill(-pid) cannot reach a stranger.
bool has_exited(pid_t pid);

}  // namespace trainhook::detail
