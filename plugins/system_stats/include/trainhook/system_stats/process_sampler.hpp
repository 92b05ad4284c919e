// Reads the process's memory and CPU time and the cgroup memory limit from
// /proc and /sys/fs/cgroup (paths injectable for tests), and turns two CPU
// readings into a percentage of one core (top's %CPU: 200 is two busy cores).
#pragma once

#include <trainhook/system_stats/proc_text.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::system_stats {

struct ProcPaths {
  std::filesystem::path proc_self = "/proc/self";
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
};

// The memory limit file for this process: v2 <root><path>/memory.max, v1
// <root>/memory<path>/memory.limit_in_bytes, walking up to the root (a
// container often sees only its own subtree mounted at the root), first found.
std::vector<std::filesystem::path> cgroup_limit_candidates(const std::vector<CgroupLine>& lines,
                                                           const std::filesystem::path& cgroup_root);

// A kernel text file opened once and read again from offset 0 at each sample:
// /proc and cgroup files regenerate their text on every read, and opening one
// costs more than reading it (a sample runs on the training thread).
class KeptFile {
 public:
  KeptFile() = default;
  explicit KeptFile(const std::filesystem::path& path);
  ~KeptFile();
  KeptFile(KeptFile&& other) noexcept;
  KeptFile& operator=(KeptFile&& other) noexcept;
  KeptFile(const KeptFile&) = delete;
  KeptFile& operator=(const KeptFile&) = delete;

  bool is_open() const noexcept { return fd_ >= 0; }
  // The file's current text (at most 64 KiB), or nullopt when it cannot be read.
  std::optional<std::string> read() const;

 private:
  int fd_ = -1;
};

class ProcessSampler {
 public:
  explicit ProcessSampler(ProcPaths paths = {}, long ticks_per_second = 0);

  // The names and values of one sample (system/rss_bytes, ...). `wall_seconds`:
  // a steady clock; the CPU percentage is over the time since the previous call
  // (the first call gives none).
  std::vector<std::pair<std::string, double>> sample(double wall_seconds);

 private:
  ProcPaths paths_;
  bool live_;  // paths_ are this process's own /proc/self
  double ticks_per_second_;
  KeptFile memory_;  // live: statm (RSS; the peak comes from getrusage); else status
  KeptFile stat_;    // not live: stat (CPU ticks; live reads the process CPU clock)
  KeptFile limit_;   // the cgroup memory limit file, resolved once
  long page_size_;
  bool limit_resolved_ = false;
  std::optional<std::pair<double, double>> last_cpu_;  // (wall seconds, CPU seconds)
};

}  // namespace trainhook::system_stats
