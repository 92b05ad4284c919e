// Options of the early_stopping callback, HF EarlyStoppingCallback's two
// arguments, read from the callback's plugin_config section
// ({"early_stopping_patience": 3, ...}; the short names "patience" and
// "threshold" are accepted too). The keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <cstdint>
#include <string>

namespace trainhook::early_stopping {

class EarlyStoppingOptions {
  // Evaluations without improvement before training stops (>= 1).
  TRAINHOOK_OPTION(int64_t, patience, 1);

 public:
  // How much better than the best a value must be to count as an improvement (>= 0).
  TRAINHOOK_OPTION(double, threshold, 0.0);

 public:
  static const OptionTable<EarlyStoppingOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static EarlyStoppingOptions from_json(const std::string& config_json) { return table().parse(config_json); }
};

}  // namespace trainhook::early_stopping
