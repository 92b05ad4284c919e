// The option structs the trainer gives optim/ carry every argument they hold,
// not the structs' own defaults.
#include <trainhook/trainer/options_from_arguments.hpp>

#include <doctest/doctest.h>

using namespace trainhook;

TEST_CASE("optimizer_options: every optimizer argument of the run") {
  TrainingArguments args;
  args.optim = OptimizerName::rmsprop;
  args.optim_args = "alpha=0.9,centered=true";
  args.learning_rate = 0.25;
  args.weight_decay = 0.125;
  args.adam_beta1 = 0.5;
  args.adam_beta2 = 0.75;
  args.adam_epsilon = 1e-4;
  const OptimizerOptions o = optimizer_options(args);
  CHECK(o.optim_ == OptimizerName::rmsprop);
  CHECK(o.optim_args_ == std::optional<std::string>("alpha=0.9,centered=true"));
  CHECK(o.learning_rate_ == 0.25);
  CHECK(o.weight_decay_ == 0.125);
  CHECK(o.adam_beta1_ == 0.5);
  CHECK(o.adam_beta2_ == 0.75);
  CHECK(o.adam_epsilon_ == 1e-4);
}

TEST_CASE("optimizer_options: the run's default optimizer, which follows the LibTorch version") {
  CHECK(optimizer_options(TrainingArguments{}).optim_ == default_optimizer());
  CHECK_FALSE(optimizer_options(TrainingArguments{}).optim_args_.has_value());
}

TEST_CASE("schedule_options: type, rate, warmup and kwargs of the run") {
  TrainingArguments args;
  args.lr_scheduler_type = SchedulerType::cosine_with_min_lr;
  args.learning_rate = 0.5;
  args.warmup_steps = 0.25;
  args.warmup_ratio = 0.125;
  args.lr_scheduler_kwargs = {{"min_lr", 0.01}};
  const ScheduleOptions s = schedule_options(args);
  CHECK(s.type_ == SchedulerType::cosine_with_min_lr);
  CHECK(s.learning_rate_ == 0.5);
  CHECK(s.warmup_steps_ == 0.25);
  CHECK(s.warmup_ratio_ == 0.125);
  CHECK(s.kwargs_ == nlohmann::json{{"min_lr", 0.01}});
}
