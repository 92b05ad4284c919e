// HF's DefaultFlowCallback: the first callback of every run. It decides when to
// log, evaluate, save and stop, from the logging/eval/save strategies and the
// step counts in TrainerState. No LibTorch here.
#pragma once

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/callbacks/callback.hpp>

#include <string>

namespace trainhook {

class DefaultFlowCallback final : public detail::InternalCallback {
 public:
  explicit DefaultFlowCallback(const TrainingArguments& args);
  std::string name() const override { return "DefaultFlowCallback"; }
  uint64_t event_mask() const override;
  void on_event(EventId event, const th_event_args& args) override;

 private:
  IntervalStrategy logging_strategy_;
  IntervalStrategy eval_strategy_;
  SaveStrategy save_strategy_;
  bool logging_first_step_;
  double eval_delay_;
};

}  // namespace trainhook
