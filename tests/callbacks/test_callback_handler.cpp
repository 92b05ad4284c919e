// CallbackHandler against HF's CallbackHandler semantics: call order, masks,
// the flag resets of each event, merging of what callbacks set, the error
// policies, stop requests from other threads, and stateful callbacks.
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>

#include <doctest/doctest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <functional>
#include <map>
#include <sstream>
#include <thread>

using namespace trainhook;

namespace {

std::string flags(const th_control& c) {
  std::string s;
  s += c.should_training_stop ? 'T' : '-';
  s += c.should_epoch_stop ? 'E' : '-';
  s += c.should_save ? 'S' : '-';
  s += c.should_evaluate ? 'V' : '-';
  s += c.should_log ? 'L' : '-';
  return s;
}
std::string flags(const TrainerControl& c) {
  th_control t{};
  to_c(c, t);
  return flags(t);
}

// Records "<name>:<event>:<flags seen>" and runs an optional action.
struct Recorder final : trainhook::detail::InternalCallback {
  using Action = std::function<void(EventId, const th_event_args&)>;
  Recorder(std::string n, std::vector<std::string>& log, uint64_t mask = TH_EVENT_MASK_ALL, Action a = {})
      : name_(std::move(n)), log_(log), mask_(mask), action_(std::move(a)) {}
  std::string name() const override { return name_; }
  uint64_t event_mask() const override { return mask_; }
  void on_event(EventId ev, const th_event_args& args) override {
    log_.push_back(name_ + ":" + event_name(ev) + ":" + flags(*args.control));
    if (action_) action_(ev, args);
  }
  std::string name_;
  std::vector<std::string>& log_;
  uint64_t mask_;
  Action action_;
};

// Captures spdlog output for the duration of a test.
struct LogCapture {
  LogCapture() : previous(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous); }
  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::istringstream in(out.str());
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
  }
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> previous;
};

TrainerControl all_set() {
  TrainerControl c;
  c.should_training_stop = c.should_epoch_stop = c.should_save = c.should_evaluate = c.should_log = true;
  return c;
}

}  // namespace

TEST_CASE("each event resets exactly the flags HF's CallbackHandler resets") {
  // What the first callback sees when every flag was set before the event.
  const std::map<EventId, std::string> expected = {
      {TH_EVENT_INIT_END, "TESVL"},
      {TH_EVENT_TRAIN_BEGIN, "-ESVL"},
      {TH_EVENT_TRAIN_END, "TESVL"},
      {TH_EVENT_EPOCH_BEGIN, "T-SVL"},
      {TH_EVENT_EPOCH_END, "TESVL"},
      {TH_EVENT_STEP_BEGIN, "TE---"},
      {TH_EVENT_SUBSTEP_END, "TESVL"},
      {TH_EVENT_PRE_OPTIMIZER_STEP, "TESVL"},
      {TH_EVENT_OPTIMIZER_STEP, "TESVL"},
      {TH_EVENT_STEP_END, "TESVL"},
      {TH_EVENT_EVALUATE, "TES-L"},
      {TH_EVENT_PREDICT, "TESVL"},
      {TH_EVENT_PREDICTION_STEP, "TESVL"},
      {TH_EVENT_LOG, "TESV-"},
      {TH_EVENT_SAVE, "TE-VL"},
      {TH_EVENT_EVALUATE_BEGIN, "TESVL"},
      {TH_EVENT_EXCEPTION, "TESVL"},
  };
  REQUIRE(expected.size() == TH_EVENT_COUNT);
  for (const auto& [ev, seen] : expected) {
    CAPTURE(event_name(ev));
    std::vector<std::string> log;
    CallbackHandler h;
    h.add(std::make_unique<Recorder>("a", log));
    TrainerState state;
    TrainerControl control = all_set();
    h.fire(ev, state, control);
    REQUIRE(log.size() == 1);
    CHECK(log[0] == std::string("a:") + event_name(ev) + ":" + seen);
    CHECK(flags(control) == seen);  // nobody changed anything: the reset result comes back
  }
}

TEST_CASE("a scripted training run: order, masks and every flag against HF semantics") {
  std::vector<std::string> log;
  CallbackHandler h;
  // "flow" plays DefaultFlowCallback: log+save at step_end of step 2, stop at step 3.
  h.add(std::make_unique<Recorder>("flow", log, TH_EVENT_MASK_ALL, [](EventId ev, const th_event_args& a) {
    if (ev == TH_EVENT_STEP_END && a.state->global_step == 2)
      a.control->should_log = a.control->should_save = 1;
    if (ev == TH_EVENT_STEP_END && a.state->global_step >= 3) a.control->should_training_stop = 1;
    if (ev == TH_EVENT_EPOCH_END) a.control->should_evaluate = 1;
  }));
  // An integration that only wants on_log and on_evaluate, and asks for a save after evaluating.
  h.add(std::make_unique<Recorder>("integ", log, TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_EVALUATE),
                                   [](EventId ev, const th_event_args& a) {
                                     if (ev == TH_EVENT_EVALUATE) a.control->should_save = 1;
                                   }));
  // "progress" comes last and sees what the others set.
  h.add(std::make_unique<Recorder>("progress", log, TH_EVENT_MASK_ALL & ~TH_EVENT_BIT(TH_EVENT_SUBSTEP_END)));

  TrainerState st;
  TrainerControl c;
  std::vector<std::string> returned;  // flags handed back to the trainer after each event
  auto fire = [&](EventId ev, int64_t step) {
    st.global_step = step;
    h.fire(ev, st, c);
    returned.push_back(std::string(event_name(ev)) + "=" + flags(c));
  };
  fire(TH_EVENT_INIT_END, 0);
  fire(TH_EVENT_TRAIN_BEGIN, 0);
  fire(TH_EVENT_EPOCH_BEGIN, 0);
  for (int64_t step = 1; step <= 3; ++step) {
    fire(TH_EVENT_STEP_BEGIN, step - 1);
    fire(TH_EVENT_SUBSTEP_END, step - 1);  // gradient accumulation of 2
    fire(TH_EVENT_PRE_OPTIMIZER_STEP, step - 1);
    fire(TH_EVENT_OPTIMIZER_STEP, step - 1);
    fire(TH_EVENT_STEP_END, step);
    if (c.should_log) fire(TH_EVENT_LOG, step);
    if (c.should_save) fire(TH_EVENT_SAVE, step);
    if (c.should_training_stop) break;
  }
  fire(TH_EVENT_EPOCH_END, 3);
  if (c.should_evaluate) fire(TH_EVENT_EVALUATE, 3);
  if (c.should_save) fire(TH_EVENT_SAVE, 3);
  fire(TH_EVENT_TRAIN_END, 3);

  const std::vector<std::string> expected_log = {
      "flow:on_init_end:-----",
      "progress:on_init_end:-----",
      "flow:on_train_begin:-----",
      "progress:on_train_begin:-----",
      "flow:on_epoch_begin:-----",
      "progress:on_epoch_begin:-----",
      // step 1
      "flow:on_step_begin:-----",
      "progress:on_step_begin:-----",
      "flow:on_substep_end:-----",
      "flow:on_pre_optimizer_step:-----",
      "progress:on_pre_optimizer_step:-----",
      "flow:on_optimizer_step:-----",
      "progress:on_optimizer_step:-----",
      "flow:on_step_end:-----",
      "progress:on_step_end:-----",
      // step 2: flow sets log+save, progress sees them; on_log/on_save reset their own flag
      "flow:on_step_begin:-----",
      "progress:on_step_begin:-----",
      "flow:on_substep_end:-----",
      "flow:on_pre_optimizer_step:-----",
      "progress:on_pre_optimizer_step:-----",
      "flow:on_optimizer_step:-----",
      "progress:on_optimizer_step:-----",
      "flow:on_step_end:-----",
      "progress:on_step_end:--S-L",
      "flow:on_log:--S--",
      "integ:on_log:--S--",
      "progress:on_log:--S--",
      "flow:on_save:-----",
      "progress:on_save:-----",
      // step 3: flow stops training
      "flow:on_step_begin:-----",
      "progress:on_step_begin:-----",
      "flow:on_substep_end:-----",
      "flow:on_pre_optimizer_step:-----",
      "progress:on_pre_optimizer_step:-----",
      "flow:on_optimizer_step:-----",
      "progress:on_optimizer_step:-----",
      "flow:on_step_end:-----",
      "progress:on_step_end:T----",
      // epoch end: flow asks for evaluation; on_evaluate resets it; integ asks for a save
      "flow:on_epoch_end:T----",
      "progress:on_epoch_end:T--V-",
      "flow:on_evaluate:T----",
      "integ:on_evaluate:T----",
      "progress:on_evaluate:T-S--",
      "flow:on_save:T----",
      "progress:on_save:T----",
      "flow:on_train_end:T----",
      "progress:on_train_end:T----",
  };
  CHECK(log == expected_log);
  const std::vector<std::string> expected_returned = {
      "on_init_end=-----",
      "on_train_begin=-----",
      "on_epoch_begin=-----",
      "on_step_begin=-----",
      "on_substep_end=-----",
      "on_pre_optimizer_step=-----",
      "on_optimizer_step=-----",
      "on_step_end=-----",
      "on_step_begin=-----",
      "on_substep_end=-----",
      "on_pre_optimizer_step=-----",
      "on_optimizer_step=-----",
      "on_step_end=--S-L",
      "on_log=--S--",
      "on_save=-----",
      "on_step_begin=-----",
      "on_substep_end=-----",
      "on_pre_optimizer_step=-----",
      "on_optimizer_step=-----",
      "on_step_end=T----",
      "on_epoch_end=T--V-",
      "on_evaluate=T-S--",
      "on_save=T----",
      "on_train_end=T----",
  };
  CHECK(returned == expected_returned);
}

TEST_CASE("should_epoch_stop and should_training_stop set by a callback persist until their own reset") {
  std::vector<std::string> log;
  CallbackHandler h;
  h.add(std::make_unique<Recorder>("a", log, TH_EVENT_MASK_ALL, [](EventId ev, const th_event_args& a) {
    if (ev == TH_EVENT_STEP_END) a.control->should_epoch_stop = 1;
  }));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_STEP_END, st, c);
  h.fire(TH_EVENT_STEP_BEGIN, st, c);  // step_begin does not touch epoch_stop
  CHECK(c.should_epoch_stop);
  h.fire(TH_EVENT_EPOCH_BEGIN, st, c);
  CHECK_FALSE(c.should_epoch_stop);
}

TEST_CASE("the event payload and the state reach callbacks unchanged") {
  std::vector<std::string> log;
  CallbackHandler h;
  const char* keys[] = {"loss", "learning_rate"};
  const double values[] = {0.25, 5e-5};
  const char* skeys[] = {"note"};
  const char* svalues[] = {"hi"};
  th_values v{TH_VALUES_STRUCT_SIZE, 2, keys, values, 1, skeys, svalues};
  bool checked = false;
  h.add(std::make_unique<Recorder>("a", log, TH_EVENT_MASK_ALL, [&](EventId, const th_event_args& a) {
    CHECK(a.struct_size == TH_EVENT_ARGS_STRUCT_SIZE);
    CHECK(a.event == TH_EVENT_PREDICTION_STEP);
    CHECK(a.values == &v);
    CHECK(std::string(a.checkpoint_dir) == "out/checkpoint-7");
    CHECK(a.batch_index == 3);
    CHECK(a.batch_count == 9);
    CHECK(a.prediction_kind == 1);
    CHECK(a.state->global_step == 7);
    CHECK(a.state->epoch == doctest::Approx(1.5));
    CHECK(a.state->has_best_metric == 1);
    CHECK(a.state->best_metric == doctest::Approx(0.125));
    CHECK(std::string(a.state->best_model_checkpoint) == "out/checkpoint-4");
    CHECK(a.state->trial_name == nullptr);
    CHECK(a.state->world_size == 1);
    checked = true;
  }));
  TrainerState st;
  st.global_step = 7;
  st.epoch = 1.5;
  st.best_metric = 0.125;
  st.best_model_checkpoint = "out/checkpoint-4";
  TrainerControl c;
  EventPayload p;
  p.values = &v;
  p.checkpoint_dir = "out/checkpoint-7";
  p.batch_index = 3;
  p.batch_count = 9;
  p.prediction_kind = 1;
  h.fire(TH_EVENT_PREDICTION_STEP, st, c, p);
  CHECK(checked);
}

TEST_CASE("policy disable: a failing callback is disabled with one error line and the run goes on") {
  LogCapture capture;
  std::vector<std::string> log;
  CallbackHandler h(PluginErrorPolicy::disable);
  h.add(std::make_unique<Recorder>("first", log));
  h.add(std::make_unique<Recorder>("flaky", log, TH_EVENT_MASK_ALL, [](EventId ev, const th_event_args& a) {
    a.control->should_save = 1;  // must be rolled back: the callback failed
    if (ev == TH_EVENT_LOG) throw std::runtime_error("disk full");
  }));
  h.add(std::make_unique<Recorder>("last", log));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_LOG, st, c);
  CHECK(log == std::vector<std::string>{"first:on_log:-----", "flaky:on_log:-----", "last:on_log:-----"});
  CHECK_FALSE(c.should_save);
  log.clear();
  h.fire(TH_EVENT_STEP_END, st, c);  // flaky is no longer called
  CHECK(log == std::vector<std::string>{"first:on_step_end:-----", "last:on_step_end:-----"});
  const auto disabled = h.disabled();
  REQUIRE(disabled.size() == 1);
  CHECK(disabled[0].callback == "flaky");
  CHECK(disabled[0].event == "on_log");
  CHECK(disabled[0].message == "disk full");
  const auto lines = capture.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] == "error callback 'flaky' failed in on_log: disk full (disabled for the rest of the run)");
}

TEST_CASE("policy fail: the first error stops the run with a message naming callback and event") {
  LogCapture capture;
  std::vector<std::string> log;
  CallbackHandler h(PluginErrorPolicy::fail);
  h.add(std::make_unique<Recorder>("bad", log, TH_EVENT_MASK_ALL, [](EventId, const th_event_args&) {
    throw 42;  // not even a std::exception
  }));
  h.add(std::make_unique<Recorder>("after", log));
  TrainerState st;
  TrainerControl c;
  CHECK_THROWS_WITH_AS(h.fire(TH_EVENT_EVALUATE, st, c),
                       "callback 'bad' failed in on_evaluate: unknown exception", CallbackError);
  CHECK(log == std::vector<std::string>{"bad:on_evaluate:-----"});  // nothing after the failure
  REQUIRE(h.disabled().size() == 1);
  CHECK(h.disabled()[0].callback == "bad");
  CHECK(capture.lines().size() == 1);
}

TEST_CASE("at on_exception a failing callback is logged and never stops the others even under policy fail") {
  LogCapture capture;
  std::vector<std::string> log;
  CallbackHandler h(PluginErrorPolicy::fail);
  std::string heard;
  h.add(std::make_unique<Recorder>("bad", log, TH_EVENT_MASK_ALL, [](EventId, const th_event_args&) {
    throw std::runtime_error("cannot close the run");
  }));
  h.add(
      std::make_unique<Recorder>("after", log, TH_EVENT_MASK_ALL, [&heard](EventId, const th_event_args& a) {
        REQUIRE(a.failure != nullptr);
        heard = std::string(trainhook::failure_kind_name(a.failure->kind)) + ": " + a.failure->message;
      }));
  TrainerState st;
  st.global_step = 9;
  TrainerControl c;
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, "data row 3: bad", 9};
  EventPayload payload;
  payload.failure = &failure;
  CHECK_NOTHROW(h.fire(TH_EVENT_EXCEPTION, st, c, payload));
  CHECK(log == std::vector<std::string>{"bad:on_exception:-----", "after:on_exception:-----"});
  CHECK(heard == "error: data row 3: bad");
  REQUIRE(h.disabled().size() == 1);
  CHECK(h.disabled()[0].event == "on_exception");
  const auto lines = capture.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0] ==
        "error callback 'bad' failed in on_exception: cannot close the run (the run's own error stands)");
}

TEST_CASE("request_stop is thread-safe, sticky, and survives on_train_begin's reset") {
  LogCapture capture;
  std::vector<std::string> log;
  CallbackHandler h;
  h.add(std::make_unique<Recorder>("a", log));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&h, i] { h.request_stop("worker " + std::to_string(i)); });
  for (auto& t : threads) t.join();
  CHECK(h.stop_requested());
  CHECK(h.stop_reason().rfind("worker ", 0) == 0);
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_TRAIN_BEGIN, st, c);
  CHECK(log.back() == "a:on_train_begin:T----");
  CHECK(c.should_training_stop);
  CHECK(capture.lines().size() == 1);  // one info line for the first request only
}

TEST_CASE("duplicate and null callbacks are refused") {
  std::vector<std::string> log;
  CallbackHandler h;
  h.add(std::make_unique<Recorder>("a", log));
  CHECK_THROWS_WITH_AS(h.add(std::make_unique<Recorder>("a", log)),
                       "callback 'a' is already in the callback list", std::invalid_argument);
  CHECK_THROWS_AS(h.add(nullptr), std::invalid_argument);
  CHECK(h.find("a") != nullptr);
  CHECK(h.find("b") == nullptr);
}

namespace {
struct Stateful final : trainhook::detail::InternalCallback {
  explicit Stateful(std::string n) : name_(std::move(n)) {}
  std::string name() const override { return name_; }
  void on_event(EventId, const th_event_args&) override { ++count; }
  std::optional<nlohmann::json> save_state() override {
    return nlohmann::json{{"args", {{"patience", 3}}}, {"attributes", {{"count", count}}}};
  }
  void load_state(const nlohmann::json& s) override { count = s.at("attributes").at("count").get<int>(); }
  std::string name_;
  int count = 0;
};
}  // namespace

TEST_CASE("stateful callbacks: HF layout with TrainerControl, no growth across saves, restored on load") {
  CallbackHandler h;
  auto* s = new Stateful("early_stopping");
  h.add(std::unique_ptr<trainhook::detail::InternalCallback>(s));
  std::vector<std::string> log;
  h.add(std::make_unique<Recorder>("stateless", log));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_STEP_END, st, c);
  h.fire(TH_EVENT_STEP_END, st, c);
  c.should_save = true;
  h.save_states(st, c);
  h.save_states(st, c);  // a second save replaces, never appends (HF PR 33875)
  const nlohmann::json expected = {
      {"TrainerControl",
       {{"args",
         {{"should_epoch_stop", false},
          {"should_evaluate", false},
          {"should_log", false},
          {"should_save", true},
          {"should_training_stop", false}}},
        {"attributes", nlohmann::json::object()}}},
      // HF's class name for the callbacks that are HF's (callbacks/hf_callback_names.hpp).
      {"EarlyStoppingCallback", {{"args", {{"patience", 3}}}, {"attributes", {{"count", 2}}}}}};
  CHECK(st.stateful_callbacks == expected);

  CallbackHandler resumed;
  auto* s2 = new Stateful("early_stopping");
  resumed.add(std::unique_ptr<trainhook::detail::InternalCallback>(s2));
  TrainerControl restored;
  resumed.load_states(st, restored);
  CHECK(s2->count == 2);
  CHECK(restored.should_save);
  CHECK_FALSE(restored.should_training_stop);
}

namespace {
// An embedder's callback: the SDK's trainhook::Callback, as a plugin author writes it.
class Typed final : public trainhook::Callback {
 public:
  explicit Typed(std::vector<std::string>* seen) : seen_(seen) {}
  void on_step_end(trainhook::Event& e) override {
    seen_->push_back("step_end:" + std::to_string(e.state().global_step));
    if (e.state().global_step == 2) e.control().should_save = 1;
  }
  void on_log(trainhook::Event& e) override {
    seen_->push_back("log:" + std::to_string(*e.values().find("loss")) + ":" +
                     std::string(e.values().string_value(0)));
  }
  void on_save(trainhook::Event& e) override {
    if (e.checkpoint_dir() == "bad") throw std::runtime_error("cannot save there");
  }
  std::string save_state() override {
    return R"({"args": {}, "attributes": {"n": )" + std::to_string(n) + "}}";
  }
  void load_state(const std::string& json) override { n = nlohmann::json::parse(json)["attributes"]["n"]; }
  int n = 7;

 private:
  std::vector<std::string>* seen_;
};
}  // namespace

TEST_CASE("an embedder's trainhook::Callback: typed events, mask from overrides, flags, state, errors") {
  std::vector<std::string> seen;
  NamedCallback nc = make_callback<Typed>("typed", &seen);
  CHECK(nc.event_mask ==
        (TH_EVENT_BIT(TH_EVENT_STEP_END) | TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_SAVE)));
  auto* typed = static_cast<Typed*>(nc.callback.get());
  CallbackHandler h;
  h.add(std::move(nc));
  std::vector<std::string> log;
  h.add(std::make_unique<Recorder>("after", log));
  TrainerState st;
  TrainerControl c;
  st.global_step = 1;
  h.fire(TH_EVENT_STEP_END, st, c);
  h.fire(TH_EVENT_EPOCH_END, st, c);  // not overridden: never dispatched
  st.global_step = 2;
  h.fire(TH_EVENT_STEP_END, st, c);
  CHECK(c.should_save);
  CHECK(log.back() == "after:on_step_end:--S--");  // the next callback sees what Typed set
  const char* keys[] = {"loss"};
  const double values[] = {0.5};
  const char* skeys[] = {"note"};
  const char* svalues[] = {"hi"};
  const th_values v{TH_VALUES_STRUCT_SIZE, 1, keys, values, 1, skeys, svalues};
  EventPayload p;
  p.values = &v;
  h.fire(TH_EVENT_LOG, st, c, p);
  CHECK(seen == std::vector<std::string>{"step_end:1", "step_end:2", "log:0.500000:hi"});

  h.save_states(st, c);
  CHECK(st.stateful_callbacks["typed"] == nlohmann::json::parse(R"({"args": {}, "attributes": {"n": 7}})"));
  st.stateful_callbacks["typed"]["attributes"]["n"] = 11;
  h.load_states(st);
  CHECK(typed->n == 11);

  EventPayload bad;
  bad.checkpoint_dir = "bad";
  h.fire(TH_EVENT_SAVE, st, c, bad);  // default policy: disabled with the message, training goes on
  const auto d = h.disabled();
  REQUIRE(d.size() == 1);
  CHECK(d[0].callback == "typed");
  CHECK(d[0].event == "on_save");
  CHECK(d[0].message == "cannot save there");

  CallbackHandler h2;
  CHECK_THROWS_WITH_AS(h2.add(NamedCallback{"empty", nullptr}), "C++ callback 'empty' is null",
                       std::invalid_argument);
}

namespace {
// A callback that fails at every event; critical or not.
class Failing final : public trainhook::detail::InternalCallback {
 public:
  Failing(std::string n, bool critical) : name_(std::move(n)), critical_(critical) {}
  std::string name() const override { return name_; }
  bool critical() const override { return critical_; }
  void on_event(EventId, const th_event_args&) override {
    throw std::runtime_error("audit sink unreachable");
  }

 private:
  std::string name_;
  bool critical_;
};
}  // namespace

TEST_CASE("a critical callback's failure stops the run whatever plugin_error_policy says (ABI 1.1)") {
  CallbackHandler h(PluginErrorPolicy::disable);
  h.add(std::make_unique<Failing>("plain", false));
  h.add(std::make_unique<Failing>("audit", true));
  TrainerState st;
  TrainerControl c;
  CHECK_THROWS_WITH_AS(h.fire(TH_EVENT_LOG, st, c),
                       "critical callback 'audit' failed in on_log: audit sink unreachable", CallbackError);
  REQUIRE(h.disabled().size() == 2);
  CHECK(h.disabled()[0].callback == "plain");  // not critical: disabled, the run went on to the next
}

TEST_CASE("the running event is known while its callbacks run, -1 between events") {
  std::vector<std::string> log;
  CallbackHandler h;
  EventId seen = -2;
  CHECK(h.current_event() == -1);
  h.add(std::make_unique<Recorder>("r", log, TH_EVENT_MASK_ALL,
                                   [&](EventId, const th_event_args&) { seen = h.current_event(); }));
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_PRE_OPTIMIZER_STEP, st, c);
  CHECK(seen == TH_EVENT_PRE_OPTIMIZER_STEP);
  CHECK(h.current_event() == -1);
}

TEST_CASE("an internal callback is called like any other but neither listed nor popped") {
  std::vector<std::string> log;
  CallbackHandler h;
  h.add(std::make_unique<Recorder>("A", log));
  h.add(std::make_unique<Recorder>("Keeper", log), CallbackHandler::Listing::internal);
  h.add(std::make_unique<Recorder>("B", log));
  CHECK(h.listed_names() == std::vector<std::string>{"A", "B"});
  const detail::InternalCallback* keeper = h.find("Keeper");
  REQUIRE(keeper != nullptr);
  CHECK(h.pop("Keeper") == nullptr);
  CHECK(h.pop_instance(keeper) == nullptr);
  TrainerState st;
  TrainerControl c;
  h.fire(TH_EVENT_LOG, st, c);
  CHECK(log == std::vector<std::string>{"A:on_log:-----", "Keeper:on_log:-----", "B:on_log:-----"});
  CHECK(h.pop("A") != nullptr);
  CHECK(h.listed_names() == std::vector<std::string>{"B"});
  CHECK(h.find("Keeper") != nullptr);
}

TEST_CASE("popping a callback takes its flags with it: the others keep their own") {
  CallbackHandler h(PluginErrorPolicy::disable);
  h.add(std::make_unique<Failing>("audit", true));
  h.add(std::make_unique<Failing>("plain", false));
  REQUIRE(h.pop("audit") != nullptr);
  TrainerState st;
  TrainerControl c;
  CHECK_NOTHROW(h.fire(TH_EVENT_LOG, st, c));  // "plain" is not critical: disabled, the run goes on
  REQUIRE(h.disabled().size() == 1);
  CHECK(h.disabled()[0].callback == "plain");
}

// A callback that answers its calls at `side` later (deferred_events): it
// records when each begins and ends (and the flags it was sent), and its end
// may fail.
struct SideBySideCallback final : trainhook::detail::InternalCallback {
  SideBySideCallback(std::string n, std::vector<std::string>& log, uint64_t side, bool fail_at_end = false)
      : name_(std::move(n)), log_(log), side_(side), fail_at_end_(fail_at_end) {}
  std::string name() const override { return name_; }
  uint64_t deferred_events() const noexcept override { return side_; }
  void on_event(EventId ev, const th_event_args& args) override {
    log_.push_back(name_ + ":" + event_name(ev) + ":" + flags(*args.control));
  }
  void begin_event(EventId ev, const th_event_args& args) override {
    REQUIRE((side_ & TH_EVENT_BIT(ev)) != 0);
    log_.push_back(name_ + ":begin " + event_name(ev) + ":" + flags(*args.control));
  }
  void end_event(EventId ev) override {
    log_.push_back(name_ + ":end " + event_name(ev));
    if (fail_at_end_) throw std::runtime_error("its side-by-side call failed");
  }
  std::string name_;
  std::vector<std::string>& log_;
  uint64_t side_;
  bool fail_at_end_;
};

TEST_CASE(
    "deferred calls overlap the next callbacks' calls and all end, in order, before the event does") {
  std::vector<std::string> log;
  CallbackHandler h;
  h.add(std::make_unique<SideBySideCallback>("a", log, TH_EVENT_BIT(TH_EVENT_SAVE)));
  h.add(std::make_unique<Recorder>("b", log, TH_EVENT_MASK_ALL, [](EventId ev, const th_event_args& a) {
    if (ev == TH_EVENT_SAVE) a.control->should_training_stop = 1;
  }));
  h.add(std::make_unique<SideBySideCallback>("c", log, TH_EVENT_BIT(TH_EVENT_SAVE)));
  h.add(std::make_unique<Recorder>("d", log));
  TrainerState st;
  TrainerControl c;
  c.should_save = true;
  h.fire(TH_EVENT_SAVE, st, c);
  // c is sent what b set, as HF's handler would pass it; a is answered first.
  CHECK(log == std::vector<std::string>{"a:begin on_save:-----", "b:on_save:-----", "c:begin on_save:T----",
                                        "d:on_save:T----", "a:end on_save", "c:end on_save"});
  CHECK(c.should_training_stop);
  CHECK_FALSE(c.should_save);
  log.clear();
  h.fire(TH_EVENT_LOG, st, c);  // not declared there: called in turn
  CHECK(log ==
        std::vector<std::string>{"a:on_log:T----", "b:on_log:T----", "c:on_log:T----", "d:on_log:T----"});
}

TEST_CASE("a deferred call that fails is named, and one that stops the run leaves none unanswered") {
  std::vector<std::string> log;
  SUBCASE("disable: the callback is disabled, the event goes on") {
    CallbackHandler h;
    h.add(std::make_unique<SideBySideCallback>("a", log, TH_EVENT_BIT(TH_EVENT_SAVE), /*fail_at_end=*/true));
    h.add(std::make_unique<SideBySideCallback>("b", log, TH_EVENT_BIT(TH_EVENT_SAVE)));
    TrainerState st;
    TrainerControl c;
    h.fire(TH_EVENT_SAVE, st, c);
    CHECK(log == std::vector<std::string>{"a:begin on_save:-----", "b:begin on_save:-----", "a:end on_save",
                                          "b:end on_save"});
    REQUIRE(h.disabled().size() == 1);
    CHECK(h.disabled()[0].callback == "a");
    CHECK(h.disabled()[0].event == "on_save");
    CHECK(h.disabled()[0].message == "its side-by-side call failed");
  }
  SUBCASE("fail: the run stops, and the calls begun after it are still answered") {
    CallbackHandler h(PluginErrorPolicy::fail);
    h.add(std::make_unique<SideBySideCallback>("a", log, TH_EVENT_BIT(TH_EVENT_SAVE), /*fail_at_end=*/true));
    h.add(std::make_unique<SideBySideCallback>("b", log, TH_EVENT_BIT(TH_EVENT_SAVE)));
    TrainerState st;
    TrainerControl c;
    CHECK_THROWS_WITH_AS(h.fire(TH_EVENT_SAVE, st, c),
                         "callback 'a' failed in on_save: its side-by-side call failed", CallbackError);
    CHECK(log.back() == "b:end on_save");
  }
}
