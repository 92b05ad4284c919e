// Learning-rate schedules with warmup, as transformers' get_scheduler: the
// learning rate after `step` optimizer steps is base_lr × factor(step).
// No LibTorch here (the trainer applies the rate to its optimizer).
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainhook {

// SchedulerType (args/strategies.hpp) is parsed with the arguments.

// HF's lambdas: warmup step/max(1,warmup), then linear decay to 0 at
// total_steps, half a cosine period to 0, or constant.
double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps);

// HF's get_warmup_steps: warmup_steps if > 0 (a value < 1 is a ratio of
// max_steps, rounded up), else ceil(max_steps × warmup_ratio).
int64_t warmup_steps_for(const TrainingArguments& args, int64_t max_steps);

// A LambdaLR: step() counts optimizer steps; lr() is the rate to use next.
class LrScheduler {
 public:
  LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps);
  void step() noexcept { ++step_; }
  double lr() const noexcept;
  int64_t last_step() const noexcept { return step_; }
  nlohmann::json state() const;
  // Throws std::runtime_error when the state does not fit this schedule.
  void load_state(const nlohmann::json& state);

 private:
  SchedulerType type_;
  double base_lr_;
  int64_t warmup_;
  int64_t total_;
  int64_t step_ = 0;
};

}  // namespace trainhook
