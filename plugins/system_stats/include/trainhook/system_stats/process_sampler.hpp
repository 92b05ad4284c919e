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

class ProcessSampler {
 public:
  explicit ProcessSampler(ProcPaths paths = {}, long ticks_per_second = 0);

  // The names and values of one sample (system/rss_bytes, ...). `wall_seconds`:
  // a steady clock; the CPU percentage is over the time since the previous call
  // (the first call gives none).
  std::vector<std::pair<std::string, double>> sample(double wall_seconds);

 private:
  ProcPaths paths_;
  double ticks_per_second_;
  std::optional<std::filesystem::path> limit_file_;  // resolved once
  bool limit_resolved_ = false;
  std::optional<std::pair<double, double>> last_cpu_;  // (wall seconds, CPU seconds)
};

}  // namespace trainhook::system_stats
