// Options of the early_stopping callback, HF EarlyStoppingCallback's two
// arguments. Built with chained setters or read from the callback's
// plugin_config section ({"early_stopping_patience": 3, ...}; the short names
// "patience" and "threshold" are accepted too).
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::early_stopping {

class EarlyStoppingOptions {
 public:
  // Evaluations without improvement before training stops (>= 1).
  EarlyStoppingOptions& patience(int64_t p);
  // How much better than the best a value must be to count as an improvement (>= 0).
  EarlyStoppingOptions& threshold(double t);
  int64_t patience() const noexcept { return patience_; }
  double threshold() const noexcept { return threshold_; }

  // Parses a plugin_config section (a JSON object text). Throws
  // trainhook::ConfigError naming the key and the valid keys for an unknown key,
  // and naming the key and what was expected for a bad value. Numbers given as
  // strings ("3", from --plugin_config flags) are accepted.
  static EarlyStoppingOptions from_json(const std::string& config_json);

 private:
  int64_t patience_ = 1;
  double threshold_ = 0.0;
};

}  // namespace trainhook::early_stopping
