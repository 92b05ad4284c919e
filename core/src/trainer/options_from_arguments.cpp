#include <trainhook/trainer/options_from_arguments.hpp>

namespace trainhook {

OptimizerOptions optimizer_options(const TrainingArguments& args) {
  return OptimizerOptions()
      .optim(args.optim)
      .optim_args(args.optim_args)
      .learning_rate(args.learning_rate)
      .weight_decay(args.weight_decay)
      .adam_beta1(args.adam_beta1)
      .adam_beta2(args.adam_beta2)
      .adam_epsilon(args.adam_epsilon);
}

ScheduleOptions schedule_options(const TrainingArguments& args) {
  return ScheduleOptions()
      .type(args.lr_scheduler_type)
      .learning_rate(args.learning_rate)
      .warmup_steps(args.warmup_steps)
      .warmup_ratio(args.warmup_ratio)
      .kwargs(args.lr_scheduler_kwargs);
}

}  // namespace trainhook
