// Parsers of the kernel's text files system_stats reads: /proc/self/status,
// /proc/self/statm, /proc/self/stat, /proc/self/cgroup and the cgroup memory
// limit files. They take any bytes (a file read while the kernel rewrites it, a container's
// odd mount) and answer nullopt for what they cannot read; they never throw
// (fuzz/fuzz_proc_text.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainhook::system_stats {

// VmRSS and VmHWM of /proc/self/status, in bytes (the file gives kB).
struct ProcStatus {
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> peak_rss_bytes;
};
ProcStatus parse_proc_status(std::string_view text);

// The resident set of /proc/self/statm (its second field, in pages) in bytes.
std::optional<uint64_t> parse_proc_statm_rss_bytes(std::string_view text, long page_size);

// utime + stime of /proc/self/stat, in clock ticks (fields 14 and 15, counted
// after the command name, which is in parentheses and may hold spaces and ')').
std::optional<uint64_t> parse_proc_stat_cpu_ticks(std::string_view text);

// One line of /proc/self/cgroup: "<id>:<controllers>:<path>" (v2: "0::<path>").
struct CgroupLine {
  std::string hierarchy;
  std::vector<std::string> controllers;
  std::string path;
};
std::vector<CgroupLine> parse_proc_self_cgroup(std::string_view text);

// A memory limit file: cgroup v2 memory.max ("max" or bytes) or v1
// memory.limit_in_bytes (bytes; v1 says "no limit" with a number near 2^63).
// nullopt: no limit, or not a limit.
std::optional<uint64_t> parse_cgroup_memory_limit(std::string_view text);

}  // namespace trainhook::system_stats
