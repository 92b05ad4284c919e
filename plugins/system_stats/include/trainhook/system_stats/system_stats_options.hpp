// Options of the system_stats callback ({"interval_steps": 10, "gpu": true}).
#pragma once

#include <trainhook/support/option.hpp>

#include <cstdint>
#include <string>

namespace trainhook::system_stats {

class SystemStatsOptions {
 public:
  // A sample at the first logging step at or after every multiple of this.
  TRAINHOOK_OPTION(int64_t, interval_steps, 10);

 public:
  // Look for NVIDIA GPUs through NVML.
  TRAINHOOK_OPTION(bool, gpu, true);

 public:
  static SystemStatsOptions from_json(const std::string& config_json);
};

}  // namespace trainhook::system_stats
