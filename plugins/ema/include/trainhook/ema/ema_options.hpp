// Options of the ema callback, from its plugin_config section
// ({"decay": 0.999, "warmup": true, "evaluate_with_ema": true, "update_every": 1,
//   "final_weights": true}).
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::ema {

class EmaOptions {
 public:
  EmaOptions& decay(double d);  // in [0, 1)
  // Warm-up: the decay of update n is min(decay, (1 + n) / (10 + n)) (TF/timm).
  EmaOptions& warmup(bool w) {
    warmup_ = w;
    return *this;
  }
  // Swap the EMA weights in for every evaluation, and back after it.
  EmaOptions& evaluate_with_ema(bool e) {
    evaluate_with_ema_ = e;
    return *this;
  }
  EmaOptions& update_every(int64_t n);  // >= 1 optimizer steps
  // At the end of training write the EMA weights into the model, so the final
  // save holds them; with --load_best_model_at_end the EMA weights saved with
  // the best checkpoint (the ones its evaluation used).
  EmaOptions& final_weights(bool f) {
    final_weights_ = f;
    return *this;
  }
  bool final_weights() const noexcept { return final_weights_; }
  // Log a checksum of the EMA weights at train end as a warning, so every rank
  // prints it (replicas log warnings only): to compare ranks.
  EmaOptions& log_checksum(bool l) {
    log_checksum_ = l;
    return *this;
  }
  bool log_checksum() const noexcept { return log_checksum_; }
  double decay() const noexcept { return decay_; }
  bool warmup() const noexcept { return warmup_; }
  bool evaluate_with_ema() const noexcept { return evaluate_with_ema_; }
  int64_t update_every() const noexcept { return update_every_; }

  static EmaOptions from_json(const std::string& config_json);

 private:
  double decay_ = 0.999;
  bool warmup_ = false;
  bool evaluate_with_ema_ = true;
  int64_t update_every_ = 1;
  bool log_checksum_ = false;
  bool final_weights_ = true;
};

}  // namespace trainhook::ema
