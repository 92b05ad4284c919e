// The integration base (support/integration.hpp) owns how a run ends, once for
// every integration: finished at train end, killed at train end after a first
// signal (th_host.stop_signal), failed at on_exception with "<kind>: <message>"
// as the reason (killed for a second signal), failed when destroyed with the
// run open. The end mark and DeliveryResult carry the reason to the plugin.
// IntegrationCallback's entry points stay overridable (TestIntegration below
// overrides them, as a pack built before Integration does); Integration owns
// the begin/end/exception sequence and calls the plugin's hooks in order.
#include <doctest/doctest.h>
#include <plugin_driver.hpp>
#include <trainhook/support/end_of_run_summary.hpp>
#include <trainhook/support/integration.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace trainhook::support;

namespace {

// What the delivery saw, kept by the test (the delivery dies with the run).
struct Seen {
  std::vector<std::string> delivered;  // records, end marks included, in order
  std::vector<RunEnd> ends;            // DeliveryResult::end of each report()
  std::vector<RunOutcome> outcomes;    // DeliveryResult::outcome of each report()
};

class RecordingDelivery final : public Delivery<std::string> {
 public:
  explicit RecordingDelivery(Seen* seen) : seen_(seen) {}
  BatchResult deliver(std::vector<std::string>& batch, WorkerContext&) override {
    for (auto& r : batch) seen_->delivered.push_back(r);
    return BatchResult{batch.size(), 0};
  }
  std::optional<std::string> end_mark_with(const RunEnd& end) override {
    return std::string("end ") + run_outcome_name(end.outcome) + " [" + end.reason() + "]";
  }
  void report(DeliveryResult<std::string> r) override {
    seen_->ends.push_back(r.end);
    seen_->outcomes.push_back(r.outcome);
  }
  std::chrono::milliseconds flush_timeout() const override { return std::chrono::seconds(30); }

 private:
  Seen* seen_;
};

// On IntegrationCallback, calling start()/finish() itself (as a pack written
// before Integration does).
class TestIntegration final : public IntegrationCallback<std::string> {
 public:
  TestIntegration(const th_host* host, Seen* seen)
      : IntegrationCallback(trainhook::Host(host)), seen_(seen) {}
  void on_train_begin(trainhook::Event& e) override { start(e); }
  void on_log(trainhook::Event& e) override { enqueue("log@" + std::to_string(e.state().global_step)); }
  void on_train_end(trainhook::Event&) override { finish(RunOutcome::finished); }

 private:
  std::unique_ptr<Delivery<std::string>> open_run(trainhook::Event&) override {
    return std::make_unique<RecordingDelivery>(seen_);
  }
  Seen* seen_;
};

// One event's arguments at global_step `step`.
struct Args {
  testkit::Run run;
  th_event_args args{};
  Args(int32_t event, int64_t step, const th_failure* failure = nullptr) {
    run.state.global_step = step;
    args.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
    args.event = event;
    args.state = &run.state;
    args.control = &run.control;
    args.batch_index = -1;
    args.batch_count = -1;
    args.failure = failure;
  }
};

void fire(trainhook::Callback& cb, int32_t event, int64_t step, const th_failure* failure = nullptr) {
  Args a(event, step, failure);
  trainhook::Event e(&a.args);
  switch (event) {
    case TH_EVENT_TRAIN_BEGIN:
      cb.on_train_begin(e);
      break;
    case TH_EVENT_LOG:
      cb.on_log(e);
      break;
    case TH_EVENT_TRAIN_END:
      cb.on_train_end(e);
      break;
    case TH_EVENT_EXCEPTION:
      cb.on_exception(e);
      break;
    default:
      FAIL("unexpected event");
      break;
  }
}

}  // namespace

TEST_CASE("train end of a run nobody stopped: finished with no reason") {
  testkit::FakeHost host;
  Seen seen;
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_LOG, 5);
    fire(cb, TH_EVENT_TRAIN_END, 10);
  }
  CHECK(seen.delivered == std::vector<std::string>{"log@5", "end finished []"});
  REQUIRE(seen.ends.size() == 1);
  CHECK(seen.outcomes[0] == RunOutcome::finished);
  CHECK(seen.ends[0].stop_signal == 0);
}

TEST_CASE("a profiled run (ABI 1.5) gets a span per delivered batch from the worker thread, an unprofiled one none") {
  for (const bool profiling : {true, false}) {
    CAPTURE(profiling);
    testkit::FakeHost host;
    host.profiling = profiling;
    Seen seen;
    const auto before = std::chrono::steady_clock::now();
    {
      TestIntegration cb(host.table(), &seen);
      fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
      fire(cb, TH_EVENT_LOG, 5);
      fire(cb, TH_EVENT_TRAIN_END, 10);
    }
    const auto spans = host.spans();
    if (!profiling) {
      CHECK(spans.empty());
      continue;
    }
    REQUIRE_FALSE(spans.empty());
    const int64_t since = std::chrono::duration_cast<std::chrono::nanoseconds>(before.time_since_epoch()).count();
    for (const auto& sp : spans) {
      CHECK(sp.what == "deliver");
      CHECK(sp.start_ns >= since);
      CHECK(sp.end_ns >= sp.start_ns);
    }
  }
}

TEST_CASE("a host before 1.5 is not asked to profile: no span is sent") {
  testkit::FakeHost host;
  host.profiling = true;
  host.play_abi_minor(4);
  Seen seen;
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_LOG, 5);
    fire(cb, TH_EVENT_TRAIN_END, 10);
  }
  CHECK(host.spans().empty());
  CHECK(seen.delivered.size() == 2);
}

TEST_CASE("train end after a first signal: killed with the signal") {
  testkit::FakeHost host;
  host.stop_sig = 15;
  Seen seen;
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 7);
  }
  CHECK(seen.delivered == std::vector<std::string>{"end killed [stopped by signal 15]"});
  REQUIRE(seen.ends.size() == 1);
  CHECK(seen.outcomes[0] == RunOutcome::killed);
  CHECK(seen.ends[0].stop_signal == 15);
  CHECK(seen.ends[0].failure_kind.empty());
}

TEST_CASE("a host before 1.3 has no stop_signal: train end is finished") {
  testkit::FakeHost host;
  host.stop_sig = 15;
  host.play_abi_minor(2);
  Seen seen;
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 7);
  }
  CHECK(seen.delivered == std::vector<std::string>{"end finished []"});
}

TEST_CASE("on_exception ends the run failed with kind and message and flushes what was queued") {
  testkit::FakeHost host;
  Seen seen;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "cannot write checkpoint-20", 20};
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_LOG, 20);
    fire(cb, TH_EVENT_EXCEPTION, 20, &failure);
    // The run is over: destruction adds nothing.
  }
  CHECK(seen.delivered ==
        std::vector<std::string>{"log@20", "end failed [error: cannot write checkpoint-20]"});
  REQUIRE(seen.ends.size() == 1);
  CHECK(seen.outcomes[0] == RunOutcome::failed);
  CHECK(seen.ends[0].failure_kind == "error");
  CHECK(seen.ends[0].message == "cannot write checkpoint-20");
  CHECK(seen.ends[0].step == 20);
}

TEST_CASE("on_exception for a second signal ends the run killed with the reason") {
  testkit::FakeHost host;
  host.stop_sig = 2;
  Seen seen;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_SIGNAL, "stopped by a second SIGINT", 3};
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_EXCEPTION, 3, &failure);
  }
  CHECK(seen.delivered == std::vector<std::string>{"end killed [signal: stopped by a second SIGINT]"});
  REQUIRE(seen.outcomes.size() == 1);
  CHECK(seen.outcomes[0] == RunOutcome::killed);
}

TEST_CASE("on_exception kinds read by name and an unknown kind reads as error") {
  testkit::FakeHost host;
  for (const auto& [kind, name] :
       std::vector<std::pair<int32_t, std::string>>{{TH_FAILURE_OUT_OF_MEMORY, "out_of_memory"},
                                                    {TH_FAILURE_PLUGIN, "plugin"},
                                                    {TH_FAILURE_NON_FINITE, "non_finite"},
                                                    {99, "error"}}) {
    CAPTURE(name);
    Seen seen;
    const th_failure failure{TH_FAILURE_STRUCT_SIZE, kind, "why", 1};
    {
      TestIntegration cb(host.table(), &seen);
      fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
      fire(cb, TH_EVENT_EXCEPTION, 1, &failure);
    }
    CHECK(seen.delivered == std::vector<std::string>{"end failed [" + name + ": why]"});
  }
}

TEST_CASE("on_exception without an open run does nothing and destroyed with the run open is failed") {
  testkit::FakeHost host;
  Seen seen;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "before train begin", 0};
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_EXCEPTION, 0, &failure);
  }
  CHECK(seen.delivered.empty());
  CHECK(seen.ends.empty());
  {
    TestIntegration cb(host.table(), &seen);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
  }
  CHECK(seen.delivered == std::vector<std::string>{"end failed []"});
}

namespace {
// Records "<group>:<name>"; while one is delivered, a newer one of its group
// replaces the waiting one, and the delivery hears of it.
class CoalescingDelivery final : public Delivery<std::string> {
 public:
  CoalescingDelivery(std::atomic<bool>* release, std::atomic<int>* calls, std::vector<std::string>* seen,
                     std::vector<std::string>* superseded)
      : release_(release), calls_(calls), seen_(seen), superseded_(superseded) {}
  BatchResult deliver(std::vector<std::string>& batch, WorkerContext& ctx) override {
    ++*calls_;
    while (!*release_ && !ctx.stopping()) ctx.sleep_for(std::chrono::milliseconds(1));
    seen_->insert(seen_->end(), batch.begin(), batch.end());
    return BatchResult{batch.size(), 0};
  }
  void report(DeliveryResult<std::string>) override {}
  WorkerOptions worker_options() const override {
    WorkerOptions o;
    o.max_batch = 1;
    return o;
  }
  bool coalesces() const override { return true; }
  bool supersedes(const std::string& newer, std::string& waiting) const override {
    if (newer.substr(0, newer.find(':')) != waiting.substr(0, waiting.find(':'))) return false;
    waiting += " by " + newer;
    return true;
  }
  void superseded(std::string waiting) override { superseded_->push_back(waiting); }

 private:
  std::atomic<bool>* release_;
  std::atomic<int>* calls_;
  std::vector<std::string>* seen_;
  std::vector<std::string>* superseded_;
};
}  // namespace

TEST_CASE("a delivery that coalesces hears of each record a newer one superseded while it was busy") {
  std::atomic<bool> release{false};
  std::atomic<int> calls{0};
  std::vector<std::string> seen, superseded;
  DeliveryQueue<std::string> q(std::make_unique<CoalescingDelivery>(&release, &calls, &seen, &superseded));
  CHECK(q.enqueue("ckpt:1"));
  while (calls == 0) std::this_thread::yield();  // ckpt:1 is being delivered
  CHECK(q.enqueue("ckpt:2"));
  CHECK(q.enqueue("deck:1"));
  CHECK(q.enqueue("ckpt:3"));
  CHECK(superseded == std::vector<std::string>{"ckpt:2 by ckpt:3"});
  release = true;
  REQUIRE(q.flush(std::chrono::seconds(30)));
  CHECK(seen == std::vector<std::string>{"ckpt:1", "deck:1", "ckpt:3"});
  q.finish(RunOutcome::finished);
}

namespace {
// Integration's sequence, seen from the plugin on the training thread: each
// hook, open_run() and report(), in the order they came; report() first lists
// the records the worker delivered (the worker has ended by then).
class SequenceDelivery final : public Delivery<std::string> {
 public:
  explicit SequenceDelivery(std::vector<std::string>* calls) : calls_(calls) {}
  BatchResult deliver(std::vector<std::string>& batch, WorkerContext&) override {
    for (auto& r : batch) delivered_.push_back("deliver " + r);
    return BatchResult{batch.size(), 0};
  }
  std::optional<std::string> end_mark_with(const RunEnd& end) override {
    return std::string("end ") + run_outcome_name(end.outcome);
  }
  void report(DeliveryResult<std::string> r) override {
    calls_->insert(calls_->end(), delivered_.begin(), delivered_.end());
    calls_->push_back(std::string("report ") + run_outcome_name(r.outcome) + " [" + r.end.reason() + "]");
  }
  std::chrono::milliseconds flush_timeout() const override { return std::chrono::seconds(30); }

 private:
  std::vector<std::string>* calls_;
  std::vector<std::string> delivered_;  // worker thread
};

struct SequenceChoices {
  bool ends_open_run_at_begin = false;
  bool opens_run_to_end = false;
  bool keeps_run_after_train_end = false;
};

class SequenceIntegration final : public Integration<std::string> {
 public:
  SequenceIntegration(const th_host* host, std::vector<std::string>* calls, SequenceChoices choices = {})
      : Integration(trainhook::Host(host)), calls_(calls), choices_(choices) {}
  // An event outside the sequence that opens a run (as tensorboard's on_log does).
  void on_log(trainhook::Event& e) override {
    if (start(e)) enqueue("log@" + std::to_string(e.state().global_step));
  }

 private:
  std::unique_ptr<Delivery<std::string>> open_run(trainhook::Event&) override {
    calls_->push_back("open_run");
    return std::make_unique<SequenceDelivery>(calls_);
  }
  void run_began(trainhook::Event& e, bool opened) override {
    calls_->push_back(std::string("run_began ") + (opened ? "opened" : "open already"));
    enqueue("begin@" + std::to_string(e.state().global_step));
  }
  void train_ending(trainhook::Event&) override {
    calls_->push_back(std::string("train_ending ") + (running() ? "open" : "closed"));
  }
  void run_ending(trainhook::Event& e, const RunEnd& end) override {
    calls_->push_back(std::string("run_ending ") + run_outcome_name(end.outcome));
    enqueue("last@" + std::to_string(e.state().global_step));
  }
  void run_failing(trainhook::Event&, const RunEnd& end) override {
    calls_->push_back(std::string("run_failing ") + run_outcome_name(end.outcome) + " [" + end.reason() +
                      "]");
  }
  bool ends_open_run_at_begin() const override { return choices_.ends_open_run_at_begin; }
  bool opens_run_to_end() const override { return choices_.opens_run_to_end; }
  bool keeps_run_after_train_end() const override { return choices_.keeps_run_after_train_end; }

  std::vector<std::string>* calls_;
  SequenceChoices choices_;
};

size_t count_of(const std::vector<std::string>& calls, const std::string& prefix) {
  return static_cast<size_t>(std::count_if(calls.begin(), calls.end(),
                                           [&](const std::string& c) { return c.rfind(prefix, 0) == 0; }));
}
}  // namespace

TEST_CASE("Integration declares its record events observe-only, cut to those the plugin handles") {
  CHECK(SequenceIntegration::observed_events ==
        (TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_EVALUATE) | TH_EVENT_BIT(TH_EVENT_PREDICT)));
  // What Adapter::create hands th_host.set_observe_only: on_log only, never
  // the base's train begin/end or on_exception.
  CHECK((trainhook::detail::observed_events_of<SequenceIntegration>::value &
         trainhook::detail::event_mask<SequenceIntegration>()) == TH_EVENT_BIT(TH_EVENT_LOG));
  // on_save side by side, for an integration that handles it (this one does not).
  CHECK(SequenceIntegration::side_by_side_events == TH_EVENT_BIT(TH_EVENT_SAVE));
  CHECK((trainhook::detail::side_by_side_events_of<SequenceIntegration>::value &
         trainhook::detail::event_mask<SequenceIntegration>()) == 0);
}

TEST_CASE("Integration's normal run: open, begin records, final records, end mark, one report") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 10);
    CHECK(calls == std::vector<std::string>{"open_run", "run_began opened", "train_ending open",
                                            "run_ending finished", "deliver begin@0", "deliver last@10",
                                            "deliver end finished", "report finished []"});
    // The run is over: a late failure and a second train end do not end it again.
    const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "late", 11};
    fire(cb, TH_EVENT_EXCEPTION, 11, &failure);
    fire(cb, TH_EVENT_TRAIN_END, 11);
  }
  CHECK(count_of(calls, "report") == 1);
  CHECK(count_of(calls, "run_ending") == 1);
  CHECK(count_of(calls, "run_failing") == 0);
  CHECK(calls.back() == "train_ending closed");
}

TEST_CASE("Integration's failed run: run_failing, the failed end once, no train end hook") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "cannot write checkpoint-20", 20};
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_EXCEPTION, 20, &failure);
    fire(cb, TH_EVENT_EXCEPTION, 20, &failure);  // a second one finds no run
  }
  CHECK(calls == std::vector<std::string>{"open_run", "run_began opened",
                                          "run_failing failed [error: cannot write checkpoint-20]",
                                          "deliver begin@0", "deliver end failed",
                                          "report failed [error: cannot write checkpoint-20]"});
}

TEST_CASE("Integration after a first signal ends the run killed and a second signal's failure killed") {
  testkit::FakeHost host;
  host.stop_sig = 15;
  std::vector<std::string> calls;
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 3);
  }
  CHECK(count_of(calls, "run_ending killed") == 1);
  CHECK(calls.back() == "report killed [stopped by signal 15]");
  calls.clear();
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_SIGNAL, "stopped by a second SIGTERM", 3};
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_EXCEPTION, 3, &failure);
  }
  CHECK(count_of(calls, "run_failing killed") == 1);
  CHECK(count_of(calls, "report") == 1);
}

TEST_CASE("Integration destroyed with the run open ends it failed once, with no hook") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  { SequenceIntegration cb(host.table(), &calls); }
  CHECK(calls.empty());
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
  }
  CHECK(calls == std::vector<std::string>{"open_run", "run_began opened", "deliver begin@0",
                                          "deliver end failed", "report failed []"});
}

TEST_CASE("Integration with a run opened before train begin: kept, or ended first and reopened") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  {
    SequenceIntegration cb(host.table(), &calls);
    fire(cb, TH_EVENT_LOG, 0);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
  }
  CHECK(count_of(calls, "open_run") == 1);
  CHECK(count_of(calls, "run_began open already") == 1);
  calls.clear();
  SequenceChoices choices;
  choices.ends_open_run_at_begin = true;
  {
    SequenceIntegration cb(host.table(), &calls, choices);
    fire(cb, TH_EVENT_LOG, 0);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 4);
  }
  CHECK(calls == std::vector<std::string>{"open_run", "deliver log@0", "deliver end finished",
                                          "report finished []", "open_run", "run_began opened",
                                          "train_ending open", "run_ending finished", "deliver begin@0",
                                          "deliver last@4", "deliver end finished", "report finished []"});
}

TEST_CASE("Integration keeping the run after train end ends it finished at destruction once") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  SequenceChoices choices;
  choices.keeps_run_after_train_end = true;
  {
    SequenceIntegration cb(host.table(), &calls, choices);
    fire(cb, TH_EVENT_TRAIN_BEGIN, 0);
    fire(cb, TH_EVENT_TRAIN_END, 5);
    CHECK(count_of(calls, "report") == 0);
    fire(cb, TH_EVENT_LOG, 6);  // the final evaluate()'s log, in the same run
  }
  CHECK(calls == std::vector<std::string>{"open_run", "run_began opened", "train_ending open",
                                          "run_ending finished", "deliver begin@0", "deliver last@5",
                                          "deliver log@6", "deliver end finished", "report finished []"});
}

TEST_CASE("Integration that opens a run to end it: a failure with none open still ends one") {
  testkit::FakeHost host;
  std::vector<std::string> calls;
  SequenceChoices choices;
  choices.opens_run_to_end = true;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "early", 0};
  {
    SequenceIntegration cb(host.table(), &calls, choices);
    fire(cb, TH_EVENT_EXCEPTION, 0, &failure);
  }
  CHECK(calls == std::vector<std::string>{"open_run", "run_failing failed [error: early]",
                                          "deliver end failed", "report failed [error: early]"});
  calls.clear();
  {
    SequenceIntegration cb(host.table(), &calls);  // the default: nothing to end
    fire(cb, TH_EVENT_EXCEPTION, 0, &failure);
    fire(cb, TH_EVENT_TRAIN_END, 0);
  }
  CHECK(calls == std::vector<std::string>{"train_ending closed"});
}
