// HF's DefaultFlowCallback.on_step_end / on_epoch_end (transformers
// trainer_callback.py): the flags the loop acts on after each step and epoch.
#include <trainhook/callbacks/default_flow_callback.hpp>

namespace trainhook {

DefaultFlowCallback::DefaultFlowCallback(const TrainingArguments& args)
    : logging_strategy_(args.logging_strategy),
      eval_strategy_(args.eval_strategy),
      save_strategy_(args.save_strategy),
      logging_first_step_(args.logging_first_step),
      eval_delay_(args.eval_delay) {}

uint64_t DefaultFlowCallback::event_mask() const {
  return TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_EPOCH_END);
}

void DefaultFlowCallback::on_event(EventId event, const th_event_args& args) {
  const th_state& s = *args.state;
  th_control& c = *args.control;
  if (event == TH_EVENT_STEP_END) {
    const int64_t step = s.global_step;
    if (step == 1 && logging_first_step_) c.should_log = 1;
    if (logging_strategy_ == IntervalStrategy::steps && s.logging_steps > 0 && step % s.logging_steps == 0)
      c.should_log = 1;
    if (eval_strategy_ == IntervalStrategy::steps && s.eval_steps > 0 && step % s.eval_steps == 0 &&
        eval_delay_ <= static_cast<double>(step)) {
      c.should_evaluate = 1;
    }
    if (save_strategy_ == SaveStrategy::steps && s.save_steps > 0 && step % s.save_steps == 0)
      c.should_save = 1;
    if (step >= s.max_steps) {
      c.should_training_stop = 1;
      if (save_strategy_ == SaveStrategy::steps) c.should_save = 1;
    }
  } else if (event == TH_EVENT_EPOCH_END) {
    if (logging_strategy_ == IntervalStrategy::epoch) c.should_log = 1;
    if (eval_strategy_ == IntervalStrategy::epoch && eval_delay_ <= s.epoch) c.should_evaluate = 1;
    if (save_strategy_ == SaveStrategy::epoch) c.should_save = 1;
  }
}

}  // namespace trainhook
