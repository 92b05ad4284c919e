// system_stats' readers of /proc/self/status, /proc/self/statm, /proc/self/stat,
// /proc/self/cgroup and the cgroup memory limit files, and the limit-file
// candidates built from a parsed cgroup path.
#include <trainhook/system_stats/proc_text.hpp>
#include <trainhook/system_stats/process_sampler.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace trainhook::system_stats;
  (void)parse_proc_status(text);
  (void)parse_proc_stat_cpu_ticks(text);
  (void)parse_proc_statm_rss_bytes(text, 4096);
  (void)parse_cgroup_memory_limit(text);
  for (const auto& p : cgroup_limit_candidates(parse_proc_self_cgroup(text), "/sys/fs/cgroup"))
    if (p.empty()) __builtin_trap();
  return 0;
}
