#include <trainhook/system_stats/system_stats_options.hpp>

namespace trainhook::system_stats {

const OptionTable<SystemStatsOptions>& SystemStatsOptions::table() {
  static const auto t =
      OptionTable<SystemStatsOptions>("system_stats")
          .key(TRAINHOOK_KEY(interval_steps),
               "a sample at the first logging step at or after every multiple of this (≥ 1)")
          .min(1)
          .key(TRAINHOOK_KEY(gpu), "look for NVIDIA GPUs through NVML");
  return t;
}

}  // namespace trainhook::system_stats
