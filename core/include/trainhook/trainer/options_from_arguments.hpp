// The small option structs of the areas below the trainer, filled from the
// run's TrainingArguments: optim/ and checkpoint/ take only these, so they
// never see the whole argument set. No LibTorch here.
#pragma once

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/optim/optimizer_options.hpp>
#include <trainhook/optim/schedule_options.hpp>

namespace trainhook {

// --optim, --optim_args, --learning_rate, --weight_decay, --adam_*.
OptimizerOptions optimizer_options(const TrainingArguments& args);
// --lr_scheduler_type, --learning_rate, --warmup_steps, --warmup_ratio, --lr_scheduler_kwargs.
ScheduleOptions schedule_options(const TrainingArguments& args);

}  // namespace trainhook
