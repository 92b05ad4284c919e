// Options of the ema callback, from its plugin_config section
// ({"decay": 0.999, "warmup": true, "evaluate_with_ema": true, "update_every": 1,
//   "final_weights": true}); the keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <cstdint>
#include <string>

namespace trainhook::ema {

class EmaOptions {
  // In [0, 1): ema = decay * ema + (1 - decay) * weights.
  TRAINHOOK_OPTION(double, decay, 0.999);

 public:
  // Warm-up: the decay of update n is min(decay, (1 + n) / (10 + n)) (TF/timm).
  TRAINHOOK_OPTION(bool, warmup, false);

 public:
  // Swap the EMA weights in for every evaluation, and back after it.
  TRAINHOOK_OPTION(bool, evaluate_with_ema, true);

 public:
  // >= 1 optimizer steps between updates.
  TRAINHOOK_OPTION(int64_t, update_every, 1);

 public:
  // Log a checksum of the EMA weights at train end as a warning, so every rank
  // prints it (replicas log warnings only): to compare ranks.
  TRAINHOOK_OPTION(bool, log_checksum, false);

 public:
  // At the end of training write the EMA weights into the model, so the final
  // save holds them; with --load_best_model_at_end the EMA weights saved with
  // the best checkpoint (the ones its evaluation used).
  TRAINHOOK_OPTION(bool, final_weights, true);

 public:
  static const OptionTable<EmaOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static EmaOptions from_json(const std::string& config_json) { return table().parse(config_json); }
};

}  // namespace trainhook::ema
