// The learning-rate schedule a run asks for, in the style of LibTorch's
// AdamOptions (fields with chained setters): its type, base rate, warmup and
// lr_scheduler_kwargs. LrScheduler (lr_schedule.hpp) is built from it; the
// trainer fills it from the run's arguments (trainer/options_from_arguments.hpp).
// Not to be confused with LrScheduleOptions, the kwargs once checked and read.
// No LibTorch here.
#pragma once

#include <trainhook/args/strategies.hpp>
#include <trainhook/common/option_arg.hpp>

#include <nlohmann/json.hpp>

namespace trainhook {

struct ScheduleOptions {
  // --lr_scheduler_type.
  TRAINHOOK_ARG(SchedulerType, type) = SchedulerType::linear;
  // --learning_rate: the rate the schedule's factor multiplies.
  TRAINHOOK_ARG(double, learning_rate) = 5e-5;
  // --warmup_steps: a step count, or a ratio of the run's steps when < 1.
  TRAINHOOK_ARG(double, warmup_steps) = 0;
  // --warmup_ratio: used when warmup_steps is 0.
  TRAINHOOK_ARG(double, warmup_ratio) = 0.0;
  // --lr_scheduler_kwargs (lr_schedule_options checks the keys).
  TRAINHOOK_ARG(nlohmann::json, kwargs) = nlohmann::json::object();
};

}  // namespace trainhook
