// Options of the system_stats callback ({"interval_steps": 10, "gpu": true});
// the keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <cstdint>
#include <string>

namespace trainhook::system_stats {

class SystemStatsOptions {
  // A sample at the first logging step at or after every multiple of this.
  TRAINHOOK_OPTION(int64_t, interval_steps, 10);

 public:
  // Look for NVIDIA GPUs through NVML.
  TRAINHOOK_OPTION(bool, gpu, true);

 public:
  static const OptionTable<SystemStatsOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static SystemStatsOptions from_json(const std::string& config_json) { return table().parse(config_json); }
};

}  // namespace trainhook::system_stats
