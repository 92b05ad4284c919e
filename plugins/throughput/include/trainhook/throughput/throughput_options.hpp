// Options of the throughput callback ({"window_size": 100, "peak_flops": 3.12e14});
// the keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace trainhook::throughput {

class ThroughputOptions {
  // Optimizer steps per window (Composer's default).
  TRAINHOOK_OPTION(int64_t, window_size, 100);

 public:
  // FLOPs per second one device can do at most: adds throughput/device/mfu.
  TRAINHOOK_OPTION(std::optional<double>, peak_flops, std::nullopt);

 public:
  // FLOPs one training sample costs (forward + backward), instead of the
  // trainer's count (th_state.total_flos).
  TRAINHOOK_OPTION(std::optional<double>, flops_per_sample, std::nullopt);

 public:
  static const OptionTable<ThroughputOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static ThroughputOptions from_json(const std::string& config_json) { return table().parse(config_json); }
};

}  // namespace trainhook::throughput
