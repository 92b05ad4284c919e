// The learning-rate schedule a run asks for, in the style of LibTorch's
// AdamOptions (fields with chained setters): its type, base rate, warmup and
// lr_scheduler_kwargs. LrScheduler (lr_schedule.hpp) is built from it; the
// trainer fills it from the run's arguments (trainer/options_from_arguments.hpp).
// Not to be confused with LrScheduleOptions, the kwargs once checked and read.
// No LibTorch here.
#pragma once

#include <trainhook/args/strategies.hpp>

#include <nlohmann/json.hpp>
#include <utility>

namespace trainhook {

struct ScheduleOptions {
  // --lr_scheduler_type.
  ScheduleOptions& type(SchedulerType value) {
    type_ = value;
    return *this;
  }
  // --learning_rate: the rate the schedule's factor multiplies.
  ScheduleOptions& learning_rate(double value) {
    learning_rate_ = value;
    return *this;
  }
  // --warmup_steps: a step count, or a ratio of the run's steps when < 1.
  ScheduleOptions& warmup_steps(double value) {
    warmup_steps_ = value;
    return *this;
  }
  // --warmup_ratio: used when warmup_steps is 0.
  ScheduleOptions& warmup_ratio(double value) {
    warmup_ratio_ = value;
    return *this;
  }
  // --lr_scheduler_kwargs (lr_schedule_options checks the keys).
  ScheduleOptions& kwargs(nlohmann::json value) {
    kwargs_ = std::move(value);
    return *this;
  }

  SchedulerType type_ = SchedulerType::linear;
  double learning_rate_ = 5e-5;
  double warmup_steps_ = 0;
  double warmup_ratio_ = 0.0;
  nlohmann::json kwargs_ = nlohmann::json::object();
};

}  // namespace trainhook
