// testkit::thread_wakeups: how many times the thread of this process named
// `name` went to sleep and was woken (Linux's voluntary context switches, read
// from /proc/self/task/*/status). A test counts them over a window to check
// that the producer's calls did not wake the thread; -1 when no thread of that
// name exists. Thread names are at most 15 bytes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace testkit {

inline int64_t thread_wakeups(const std::string& name) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string got;
    if (!std::getline(comm, got) || got != name) continue;
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      const std::string key = "voluntary_ctxt_switches:";
      if (line.rfind(key, 0) == 0) return std::stoll(line.substr(key.size()));
    }
  }
  return -1;
}

}  // namespace testkit
