// Options of the reduce_lr_on_plateau callback: the Plateau options of
// sdk/include/trainhook/plateau.hpp plus the metric, read from the plugin_config
// section ({"factor": 0.5, "patience": 2, ...}).
#pragma once

#include <trainhook/plateau.hpp>

#include <optional>
#include <string>

namespace trainhook::reduce_lr_on_plateau {

class ReduceLrOnPlateauOptions {
 public:
  ReduceLrOnPlateauOptions& plateau(const PlateauOptions& p) {
    plateau_ = p;
    return *this;
  }
  // The metric to watch; default metric_for_best_model (else eval_loss).
  ReduceLrOnPlateauOptions& metric(std::string m) {
    metric_ = std::move(m);
    return *this;
  }
  // Default: greater_is_better of the training arguments, else by the name (…loss: lower).
  ReduceLrOnPlateauOptions& greater_is_better(bool g) {
    greater_ = g;
    return *this;
  }
  const PlateauOptions& plateau() const noexcept { return plateau_; }
  const std::optional<std::string>& metric() const noexcept { return metric_; }
  const std::optional<bool>& greater_is_better() const noexcept { return greater_; }

  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static ReduceLrOnPlateauOptions from_json(const std::string& config_json);

 private:
  PlateauOptions plateau_;
  std::optional<std::string> metric_;
  std::optional<bool> greater_;
};

}  // namespace trainhook::reduce_lr_on_plateau
