// Options of the reduce_lr_on_plateau callback, read from the plugin_config
// section ({"factor": 0.5, "patience": 2, ...}); the keys are declared once, in
// table(), and plateau() gives the Plateau options of
// sdk/include/trainhook/plateau.hpp they make (its defaults are PyTorch's, as here).
#pragma once

#include <trainhook/options.hpp>
#include <trainhook/plateau.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace trainhook::reduce_lr_on_plateau {

class ReduceLrOnPlateauOptions {
  // Multiplier of the learning rate, in (0, 1).
  TRAINHOOK_OPTION(double, factor, 0.1);

 public:
  // Evaluations without improvement before a reduction.
  TRAINHOOK_OPTION(int64_t, patience, 10);

 public:
  TRAINHOOK_OPTION(double, threshold, 1e-4);

 public:
  // true: the threshold is relative to the best (PyTorch's "rel"); false: absolute.
  TRAINHOOK_OPTION(bool, relative_threshold, true);

 public:
  TRAINHOOK_OPTION(int64_t, cooldown, 0);

 public:
  TRAINHOOK_OPTION(double, min_lr, 0);

 public:
  // The metric to watch; default metric_for_best_model (else eval_loss).
  TRAINHOOK_OPTION(std::optional<std::string>, metric, std::nullopt);

 public:
  // Default: greater_is_better of the training arguments, else by the name (…loss: lower).
  TRAINHOOK_OPTION(std::optional<bool>, greater_is_better, std::nullopt);

 public:
  // The Plateau options these make (greater_is_better is resolved by the callback).
  PlateauOptions plateau() const {
    PlateauOptions p;
    p.factor(factor_).patience(patience_).threshold(threshold_).relative_threshold(relative_threshold_);
    p.cooldown(cooldown_).min_lr(min_lr_);
    return p;
  }

  static const OptionTable<ReduceLrOnPlateauOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static ReduceLrOnPlateauOptions from_json(const std::string& config_json) {
    return table().parse(config_json);
  }
};

}  // namespace trainhook::reduce_lr_on_plateau
