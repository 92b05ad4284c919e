// Loss scaling for --fp16 (HF's fp16 through accelerate's GradScaler): float16
// gradients of small losses underflow to zero, so the loss is multiplied by a
// large scale before backward, the gradients are divided by it before clipping
// and the optimizer step, and a step whose gradients overflowed (inf/NaN) is
// skipped and the scale lowered. The Trainer owns one; it is enabled with
// --fp16 only (bfloat16 has float32's range and needs none).
//
// The rules and the saved state are torch.amp.GradScaler's: scale 2^16 to start,
// x0.5 on an overflow, x2 after 2000 steps in a row without one, never grown to
// inf. Gradients are unscaled after the data-parallel all-reduce, so every rank
// sees the same overflow and skips the same steps.
#pragma once

#include <ATen/core/Tensor.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trainhook {

struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;

  GradScalerOptions& set_init_scale(double v) {
    init_scale = v;
    return *this;
  }
  GradScalerOptions& set_backoff_factor(double v) {
    backoff_factor = v;
    return *this;
  }
  GradScalerOptions& set_growth_interval(int64_t v) {
    growth_interval = v;
    return *this;
  }
};

class GradScaler {
 public:
  // Disabled, every call is a no-op (scale() returns the loss itself). Throws
  // std::invalid_argument for a scale <= 0, growth <= 1, backoff outside (0, 1)
  // or an interval < 1.
  explicit GradScaler(bool enabled, GradScalerOptions options = {});

  bool enabled() const { return enabled_; }
  // The loss times the current scale, for backward.
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides each defined gradient by the scale; true when any is inf or NaN
  // (then the optimizer step must be skipped). One device sync per call.
  bool unscale(const std::vector<at::Tensor>& parameters) const;
  // After the step: lowers the scale on an overflow (and counts a skipped step),
  // raises it after growth_interval clean steps in a row.
  void update(bool found_inf);

  double current_scale() const { return scale_; }
  int64_t skipped_steps() const { return skipped_steps_; }

  // torch.amp.GradScaler.state_dict()'s keys, plus skipped_steps.
  nlohmann::json state() const;
  // Throws std::runtime_error naming `source` and the key for a bad state.
  void load_state(const nlohmann::json& state, const std::string& source);

 private:
  bool enabled_;
  GradScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
  int64_t skipped_steps_ = 0;
};

}  // namespace trainhook
