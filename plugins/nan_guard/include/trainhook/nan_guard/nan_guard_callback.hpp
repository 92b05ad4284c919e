// nan_guard: at every on_pre_optimizer_step, checks this step's loss (the raw
// value of th_step_values, so HF's logging_nan_inf_filter does not hide it) and
// gradients (the norm before clipping; the gradient views when it is not
// finite, to name the first parameter whose gradient is not). A bad step is
// skipped (action skip) or counted, and `patience` consecutive bad steps stop
// the run (action stop) with a message naming the parameter and the step.
//
// With several processes the decision uses the gradients only (the same on
// every rank after their reduction), so every rank skips or stops together;
// the loss is this rank's and is reported, not acted on alone.
#pragma once

#include <trainhook/nan_guard/nan_guard_options.hpp>

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string>

namespace trainhook::nan_guard {

class NanGuardCallback final : public trainhook::Callback {
 public:
  explicit NanGuardCallback(trainhook::Setup& setup);
  NanGuardCallback(const trainhook::Host& host, const NanGuardOptions& options);

  void on_pre_optimizer_step(trainhook::Event& e) override;

  int64_t skipped_steps() const noexcept { return skipped_; }

 private:
  // The name of the first parameter whose gradient is not finite ("" when none).
  std::string first_non_finite_gradient() const;

  trainhook::Host host_;
  NanGuardOptions options_;
  int64_t consecutive_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace trainhook::nan_guard
