// transformers optimization.py schedules, as plain functions of the step.
#include <trainhook/trainer/lr_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace trainhook {

double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps) {
  if (type == SchedulerType::constant) return 1.0;
  if (step < warmup_steps) {
    return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
  }
  if (type == SchedulerType::constant_with_warmup) return 1.0;
  const double decay_steps = static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
  if (type == SchedulerType::linear) {
    return std::max(0.0, static_cast<double>(total_steps - step) / decay_steps);
  }
  // cosine with num_cycles = 0.5: from 1 down to 0 over the decay steps.
  const double progress = static_cast<double>(step - warmup_steps) / decay_steps;
  return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 2.0 * 0.5 * progress)));
}

int64_t warmup_steps_for(const TrainingArguments& args, int64_t max_steps) {
  return resolve_warmup_steps(args, max_steps);
}

LrScheduler::LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps)
    : type_(type), base_lr_(base_lr), warmup_(warmup_steps), total_(total_steps) {}

double LrScheduler::lr() const noexcept { return base_lr_ * lr_factor(type_, step_, warmup_, total_); }

nlohmann::json LrScheduler::state() const {
  return {{"last_step", step_}, {"base_lr", base_lr_}, {"warmup_steps", warmup_}, {"total_steps", total_}};
}

void LrScheduler::load_state(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("last_step") || !state["last_step"].is_number_integer()) {
    throw std::runtime_error("scheduler state: expected an object with an integer \"last_step\", got " +
                             state.dump());
  }
  step_ = state["last_step"].get<int64_t>();
}

}  // namespace trainhook
