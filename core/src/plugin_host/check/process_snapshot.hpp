// What a plugin must leave as it found it in the process that hosts it, read
// from /proc and the system calls: threads, child processes, signal
// dispositions, the standard descriptors and the working directory; plus the
// resident memory the memory check samples. The settings part needs no /proc
// walk, so the call watch (call_watch.hpp) takes it around every plugin call.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::plugin_check {

// Process-wide settings a library can change with one call.
struct ProcessSettings {
  std::vector<std::string> handlers;  // per signal 1..31: "<handler>/<flags>"
  std::vector<std::string> std_fds;   // 0, 1, 2: "closed" or "<dev>:<inode>"
  std::string cwd;

  static ProcessSettings take();
};

struct ProcessSnapshot : ProcessSettings {
  std::vector<pid_t> threads;   // /proc/self/task
  std::vector<pid_t> children;  // processes whose parent is this one

  static ProcessSnapshot take();
};

// "name (tid)" of each thread in `now` that is not in `before`.
std::vector<std::string> new_threads(const ProcessSnapshot& before, const ProcessSnapshot& now);
// "pid (command)" of each child in `now` not in `before`.
std::vector<std::string> new_children(const ProcessSnapshot& before, const ProcessSnapshot& now);
// "SIGTERM", ... whose disposition differs.
std::vector<std::string> changed_signals(const ProcessSettings& before, const ProcessSettings& now);
// "fd 2 (stderr) closed" / "fd 1 (stdout) now points elsewhere".
std::vector<std::string> changed_std_fds(const ProcessSettings& before, const ProcessSettings& now);

// Resident set size in bytes (/proc/self/statm); 0 when unreadable.
int64_t resident_bytes();
// Every file and folder under `dir`, relative, sorted.
std::vector<std::string> files_under(const std::filesystem::path& dir);

}  // namespace trainhook::plugin_check
