// DefaultFlowCallback: the log/evaluate/save/stop flags after each step and epoch.
#include <trainhook/callbacks/default_flow_callback.hpp>

#include <doctest/doctest.h>

using namespace trainhook;

namespace {

th_control fire(DefaultFlowCallback& cb, EventId event, int64_t step, double epoch = 0,
                int64_t max_steps = 100) {
  th_state s{};
  s.struct_size = TH_STATE_STRUCT_SIZE;
  s.global_step = step;
  s.epoch = epoch;
  s.max_steps = max_steps;
  s.logging_steps = 5;
  s.eval_steps = 10;
  s.save_steps = 20;
  th_control c{};
  c.struct_size = TH_CONTROL_STRUCT_SIZE;
  th_event_args a{};
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  a.event = event;
  a.state = &s;
  a.control = &c;
  cb.on_event(event, a);
  return c;
}

}  // namespace

TEST_CASE("steps strategies set their flags on multiples of their step counts") {
  TrainingArguments args;
  args.eval_strategy = trainhook::IntervalStrategy::steps;
  DefaultFlowCallback cb(args);
  auto c = fire(cb, TH_EVENT_STEP_END, 5);
  CHECK((c.should_log == 1 && c.should_evaluate == 0 && c.should_save == 0));
  c = fire(cb, TH_EVENT_STEP_END, 10);
  CHECK((c.should_log == 1 && c.should_evaluate == 1 && c.should_save == 0));
  c = fire(cb, TH_EVENT_STEP_END, 20);
  CHECK((c.should_log == 1 && c.should_evaluate == 1 && c.should_save == 1));
  c = fire(cb, TH_EVENT_STEP_END, 7);
  CHECK((c.should_log == 0 && c.should_evaluate == 0 && c.should_save == 0 && c.should_training_stop == 0));
  c = fire(cb, TH_EVENT_EPOCH_END, 7, 1.0);
  CHECK((c.should_log == 0 && c.should_evaluate == 0 && c.should_save == 0));
}

TEST_CASE("the last step stops training and saves under the steps save strategy only") {
  TrainingArguments args;
  DefaultFlowCallback steps(args);
  auto c = fire(steps, TH_EVENT_STEP_END, 33, 0, 33);
  CHECK((c.should_training_stop == 1 && c.should_save == 1));
  args.save_strategy = trainhook::SaveStrategy::epoch;
  DefaultFlowCallback epoch(args);
  c = fire(epoch, TH_EVENT_STEP_END, 33, 0, 33);
  CHECK((c.should_training_stop == 1 && c.should_save == 0));
}

TEST_CASE("epoch strategies act at epoch end, eval_delay holds evaluation back") {
  TrainingArguments args;
  args.logging_strategy = trainhook::IntervalStrategy::epoch;
  args.eval_strategy = trainhook::IntervalStrategy::epoch;
  args.save_strategy = trainhook::SaveStrategy::epoch;
  args.eval_delay = 2;
  DefaultFlowCallback cb(args);
  auto c = fire(cb, TH_EVENT_STEP_END, 20);
  CHECK((c.should_log == 0 && c.should_evaluate == 0 && c.should_save == 0));
  c = fire(cb, TH_EVENT_EPOCH_END, 20, 1.0);
  CHECK((c.should_log == 1 && c.should_evaluate == 0 && c.should_save == 1));
  c = fire(cb, TH_EVENT_EPOCH_END, 40, 2.0);
  CHECK(c.should_evaluate == 1);
}

TEST_CASE("logging_first_step logs step 1, eval_delay counts steps under the steps strategy") {
  TrainingArguments args;
  args.logging_first_step = true;
  args.logging_strategy = trainhook::IntervalStrategy::no;
  args.eval_strategy = trainhook::IntervalStrategy::steps;
  args.eval_delay = 15;
  DefaultFlowCallback cb(args);
  CHECK(fire(cb, TH_EVENT_STEP_END, 1).should_log == 1);
  CHECK(fire(cb, TH_EVENT_STEP_END, 5).should_log == 0);
  CHECK(fire(cb, TH_EVENT_STEP_END, 10).should_evaluate == 0);
  CHECK(fire(cb, TH_EVENT_STEP_END, 20).should_evaluate == 1);
  CHECK(cb.event_mask() == (TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_EPOCH_END)));
}
