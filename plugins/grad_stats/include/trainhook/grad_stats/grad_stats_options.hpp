// Options of the grad_stats callback ({"per": "module", "gradients": true, "weights": true});
// the keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <string>

namespace trainhook::grad_stats {

class GradStatsOptions {
  // true: one value per top-level module (the first part of the dotted name);
  // false: one per parameter (key `per`: module or parameter).
  TRAINHOOK_OPTION(bool, per_module, true);

 public:
  TRAINHOOK_OPTION(bool, gradients, true);

 public:
  TRAINHOOK_OPTION(bool, weights, true);

 public:
  static const OptionTable<GradStatsOptions>& table();
  // Throws trainhook::ConfigError for an unknown key, a bad value, or nothing to log.
  static GradStatsOptions from_json(const std::string& config_json);
};

}  // namespace trainhook::grad_stats
