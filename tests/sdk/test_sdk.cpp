// The SDK headers: TH_HAS_FIELD against older (smaller) structs (with the
// shared testkit's fake host), and the C++ layer's boundary: event masks from
// overrides, exceptions turned into status + message, the save_state buffer
// protocol, commands, the observe-only declaration (ABI 1.6), the event's
// emission time (ABI 1.7).
#include <trainhook/plugin.hpp>

#include <doctest/doctest.h>
#include <plugin_driver.hpp>

#include <chrono>
#include <cstddef>
#include <string>

namespace {

class OnlyLog final : public trainhook::Callback {
 public:
  explicit OnlyLog(trainhook::Setup& s) : config(s.config_json()) {}
  void on_log(trainhook::Event& e) override {
    if (e.state().global_step < 0) throw trainhook::ConfigError("negative step");
    if (e.state().global_step == 13) throw 13;
    if (e.state().global_step == 7) throw std::runtime_error(std::string(3000, 'x'));
    e.control().should_save = 1;
  }
  void on_save(trainhook::Event&) override {}
  std::string save_state() override { return state; }
  std::string config;
  std::string state = R"({"args": {}, "attributes": {"n": 12345}})";
};

// Declares three events observe-only, of which it handles two.
class Observer final : public trainhook::Callback {
 public:
  static constexpr uint64_t observed_events =
      TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_SAVE) | TH_EVENT_BIT(TH_EVENT_STEP_END);
  explicit Observer(trainhook::Setup&) {}
  void on_log(trainhook::Event&) override {}
  void on_save(trainhook::Event&) override {}
};

// Declares LOG observe-only, and its constructor narrows that to nothing when
// its configuration says it steers there ({"steer": true}).
class Narrowing final : public trainhook::Callback {
 public:
  static constexpr uint64_t observed_events = TH_EVENT_BIT(TH_EVENT_LOG);
  explicit Narrowing(trainhook::Setup& s) {
    if (s.config_json().find("steer") != std::string::npos) s.host().set_observe_only(0);
  }
  void on_log(trainhook::Event&) override {}
};

// Keeps state through a private override (the SDK cannot see it: assumed stateful).
class PrivateState final : public trainhook::Callback {
 public:
  explicit PrivateState(trainhook::Setup&) {}

 private:
  std::string save_state() override { return "{}"; }
  void load_state(const std::string&) override {}
};

// Declares two events side by side, of which it handles one.
class SideBySide final : public trainhook::Callback {
 public:
  static constexpr uint64_t side_by_side_events =
      TH_EVENT_BIT(TH_EVENT_SAVE) | TH_EVENT_BIT(TH_EVENT_TRAIN_END);
  explicit SideBySide(trainhook::Setup&) {}
  void on_save(trainhook::Event&) override {}
};

// What create() declared to `fake` (FakeHost::observe_only).
template <class T>
uint64_t observed_on(testkit::FakeHost& fake, const char* config = "{}") {
  const th_callback_info info = trainhook::callback<T>("t", "1.0", trainhook::Kind::callback, "d");
  void* self = nullptr;
  char err[256] = {0};
  REQUIRE(info.create(fake.table(), config, &self, err, sizeof err) == TH_OK);
  info.vtable->destroy(self);
  return fake.observe_only;
}

int echo_count(const trainhook::Host&, const std::vector<std::string>& args) {
  if (args.empty()) throw std::runtime_error("need arguments");
  return static_cast<int>(args.size());
}

th_event_args make_args(th_state& st, th_control& ctl, int32_t ev) {
  th_event_args a{};
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  a.event = ev;
  a.state = &st;
  a.control = &ctl;
  a.batch_index = -1;
  return a;
}

}  // namespace

TEST_CASE("TH_HAS_FIELD reads only what an older, smaller struct has") {
  testkit::FakeHost fake;
  fake.state_json = R"({"global_step": 9})";
  fake.run_name = "run-9";
  const trainhook::Host full(fake.table());
  CHECK(full.trainer_state_json() == fake.state_json);
  CHECK(full.run_name() == "run-9");

  // An ABI 1.0-minus host without the later fields: their function pointers
  // are still set in the fake's table, so a read past struct_size would show.
  fake.set_struct_size(offsetof(th_host, trainer_state_json));
  const th_host* h = fake.table();
  CHECK(TH_HAS_FIELD(h, th_host, request_stop));
  CHECK_FALSE(TH_HAS_FIELD(h, th_host, trainer_state_json));
  CHECK_FALSE(TH_HAS_FIELD(h, th_host, run_name));
  const th_host* none = nullptr;
  CHECK_FALSE(TH_HAS_FIELD(none, th_host, log));
  const trainhook::Host old(h);
  CHECK(old.trainer_state_json() == "{}");  // not called through a missing field
  CHECK(old.run_name().empty());
}

TEST_CASE("callback<T> describes the class, the mask has exactly the overridden events") {
  const th_callback_info info =
      trainhook::callback<OnlyLog>("only_log", "1.0", trainhook::Kind::integration, "d");
  CHECK(info.struct_size == TH_CALLBACK_INFO_STRUCT_SIZE);
  CHECK(info.event_mask == (TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_SAVE)));
  CHECK(info.kind == TH_KIND_INTEGRATION);
  CHECK(info.vtable->struct_size == TH_CALLBACK_VTABLE_STRUCT_SIZE);
}

TEST_CASE("the C++ layer turns exceptions into statuses with messages") {
  const th_callback_info info =
      trainhook::callback<OnlyLog>("only_log", "1.0", trainhook::Kind::callback, "d");
  char err[256] = {0};
  void* self = nullptr;
  REQUIRE(info.create(nullptr, nullptr, &self, err, sizeof err) == TH_OK);
  CHECK(static_cast<OnlyLog*>(static_cast<trainhook::Callback*>(self))->config == "{}");
  th_state st{};
  st.struct_size = TH_STATE_STRUCT_SIZE;
  th_control ctl{};
  ctl.struct_size = TH_CONTROL_STRUCT_SIZE;
  th_event_args a = make_args(st, ctl, TH_EVENT_LOG);
  CHECK(info.vtable->on_event(self, &a, err, sizeof err) == TH_OK);
  CHECK(ctl.should_save == 1);
  st.global_step = -1;
  CHECK(info.vtable->on_event(self, &a, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(std::string(err) == "negative step");
  st.global_step = 13;
  CHECK(info.vtable->on_event(self, &a, err, sizeof err) == TH_ERROR);
  CHECK(std::string(err) == "unknown exception");
  st.global_step = 7;  // a message longer than the buffer is truncated, NUL-terminated
  CHECK(info.vtable->on_event(self, &a, err, sizeof err) == TH_ERROR);
  CHECK(std::string(err) == std::string(sizeof err - 1, 'x'));
  a.event = 999;  // an event from a newer host is ignored
  CHECK(info.vtable->on_event(self, &a, err, sizeof err) == TH_OK);
  info.vtable->destroy(self);
}

TEST_CASE("save_state follows the two-call buffer protocol") {
  const th_callback_info info =
      trainhook::callback<OnlyLog>("only_log", "1.0", trainhook::Kind::callback, "d");
  char err[64];
  void* self = nullptr;
  REQUIRE(info.create(nullptr, "{\"a\": 1}", &self, err, sizeof err) == TH_OK);
  const std::string expected = R"({"args": {}, "attributes": {"n": 12345}})";
  char small[8];
  size_t needed = 0;
  CHECK(info.vtable->save_state(self, small, sizeof small, &needed, err, sizeof err) == TH_BUFFER_TOO_SMALL);
  CHECK(needed == expected.size() + 1);
  std::string buf(needed, '\0');
  CHECK(info.vtable->save_state(self, buf.data(), buf.size(), &needed, err, sizeof err) == TH_OK);
  CHECK(std::string(buf.c_str()) == expected);
  info.vtable->destroy(self);
}

TEST_CASE("command<Fn> passes arguments and the exit code, exceptions become errors") {
  const th_command_info cmd = trainhook::command<&echo_count>("echo-count", "counts");
  CHECK(cmd.struct_size == TH_COMMAND_INFO_STRUCT_SIZE);
  const char* argv[] = {"a", "b"};
  int32_t code = -1;
  char err[64] = {0};
  CHECK(cmd.run(nullptr, 2, argv, &code, err, sizeof err) == TH_OK);
  CHECK(code == 2);
  CHECK(cmd.run(nullptr, 0, argv, &code, err, sizeof err) == TH_ERROR);
  CHECK(std::string(err) == "need arguments");
}

// th_event_args as ABI 1.0 declared it, and as a later header might have
// declared it (one int32 appended, where 1.1 put the `step` pointer instead). The
// int32 lands in 1.0's tail padding, so a 1.0 writer that set struct_size =
// sizeof() would make the newer reader believe `appended` was written. The
// *_STRUCT_SIZE constants end at the last field and do not.
struct EventArgs10 {
  uint32_t struct_size;
  int32_t event;
  const th_state* state;
  th_control* control;
  const th_values* values;
  const char* checkpoint_dir;
  int64_t batch_index;
  int64_t batch_count;
  int32_t prediction_kind;
};
struct EventArgsAppended {
  uint32_t struct_size;
  int32_t event;
  const th_state* state;
  th_control* control;
  const th_values* values;
  const char* checkpoint_dir;
  int64_t batch_index;
  int64_t batch_count;
  int32_t prediction_kind;
  int32_t appended;
};

TEST_CASE("struct size constants end at the last field, so TH_HAS_FIELD never claims tail padding") {
  static_assert(offsetof(EventArgsAppended, prediction_kind) == offsetof(th_event_args, prediction_kind));
  static_assert(offsetof(EventArgs10, prediction_kind) == offsetof(th_event_args, prediction_kind));
  const auto size10 = static_cast<uint32_t>(TH_STRUCT_SIZE(EventArgs10, prediction_kind));
  CHECK(TH_EVENT_ARGS_STRUCT_SIZE == offsetof(th_event_args, time_ns) + sizeof(int64_t));
  REQUIRE(sizeof(EventArgs10) > size10);  // the 1.0 layout has tail padding
  EventArgsAppended a{};
  a.struct_size = static_cast<uint32_t>(sizeof(EventArgs10));  // the old, wrong rule
  CHECK(TH_HAS_FIELD(&a, EventArgsAppended, appended));
  a.struct_size = size10;  // the rule of abi.h
  CHECK(TH_HAS_FIELD(&a, EventArgsAppended, prediction_kind));
  CHECK_FALSE(TH_HAS_FIELD(&a, EventArgsAppended, appended));
  // A 1.0 plugin's event args never claim 1.1's step pointer.
  th_event_args ev{};
  ev.struct_size = size10;
  CHECK_FALSE(TH_HAS_FIELD(&ev, th_event_args, step));

  CHECK(TH_STATE_STRUCT_SIZE == offsetof(th_state, steps_in_epoch) + sizeof(int64_t));
  CHECK(TH_CONTROL_STRUCT_SIZE == offsetof(th_control, should_log) + sizeof(int32_t));
  CHECK(TH_VALUES_STRUCT_SIZE == offsetof(th_values, string_values) + sizeof(void*));
  CHECK(TH_HOST_STRUCT_SIZE == offsetof(th_host, set_side_by_side) + sizeof(void*));
  CHECK(TH_FAILURE_STRUCT_SIZE == offsetof(th_failure, step) + sizeof(int64_t));
  CHECK(TH_CALLBACK_INFO_STRUCT_SIZE == offsetof(th_callback_info, vtable) + sizeof(void*));
  CHECK(TH_STEP_VALUES_STRUCT_SIZE == offsetof(th_step_values, learning_rate) + sizeof(double));
  CHECK(TH_TENSOR_LIST_STRUCT_SIZE == offsetof(th_tensor_list, tensors) + sizeof(void*));
  CHECK(TH_PLUGIN_INFO_STRUCT_SIZE == offsetof(th_plugin_info, commands) + sizeof(void*));
  CHECK(TH_HOST_INFO_STRUCT_SIZE == offsetof(th_host_info, host_version) + sizeof(void*));
  CHECK(std::string(TRAINHOOK_ENTRY_SYMBOL) == "trainhook_plugin_v1");
}

namespace {
int count_args(const trainhook::Host&, const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "bad") throw trainhook::ConfigError("bad argument 'bad'");
  return static_cast<int>(args.size()) + 40;
}
}  // namespace

TEST_CASE("run_command: the public helper for a library's own th_command_info.run") {
  const char* argv[] = {"x", nullptr};
  int32_t code = -1;
  char err[64] = {0};
  CHECK(trainhook::run_command(&count_args, nullptr, 2, argv, &code, err, sizeof err) == TH_OK);
  CHECK(code == 42);
  const char* bad[] = {"bad"};
  CHECK(trainhook::run_command(&count_args, nullptr, 1, bad, &code, err, sizeof err) == TH_INVALID_ARGUMENT);
  CHECK(std::string(err) == "bad argument 'bad'");
}

// ---- ABI 1.1 -------------------------------------------------------------------

namespace {
class EvalPair final : public trainhook::Callback {
 public:
  explicit EvalPair(trainhook::Setup&) {}
  void on_evaluate_begin(trainhook::Event&) override { ++begins; }
  void on_evaluate(trainhook::Event&) override { ++ends; }
  int begins = 0;
  int ends = 0;
};
}  // namespace

TEST_CASE("one event list: ids, count, mask, virtuals and dispatch agree") {
  // Generated from TH_EVENT_LIST: the ids are 0..COUNT-1 and MASK_ALL has COUNT bits.
#define CHECK_ID(name, value, method) static_assert(TH_EVENT_##name == (value));
  TH_EVENT_LIST(CHECK_ID)
#undef CHECK_ID
  CHECK(TH_EVENT_COUNT == 17);
  CHECK(TH_EVENT_MASK_ALL == 0x1FFFFu);
  const th_callback_info info = trainhook::callback<EvalPair>("p", "1", trainhook::Kind::callback, "d");
  CHECK(info.event_mask == (TH_EVENT_BIT(TH_EVENT_EVALUATE_BEGIN) | TH_EVENT_BIT(TH_EVENT_EVALUATE)));
  trainhook::Setup setup(nullptr, "{}");
  EvalPair cb(setup);
  th_state st{};
  th_control ctl{};
  for (int32_t ev = 0; ev < TH_EVENT_COUNT + 2; ++ev) {  // unknown ids are ignored
    th_event_args a = make_args(st, ctl, ev);
    trainhook::Event e(&a);
    cb.dispatch(e);
  }
  CHECK(cb.begins == 1);
  CHECK(cb.ends == 1);
}

TEST_CASE("training_arg reads the run's arguments typed, with one wording for a wrong type") {
  testkit::FakeHost fake;
  fake.args_json = R"({"logging_steps": 5, "learning_rate": 0.001, "run_name": "r\u00e9sum\u00e9",
                       "load_best_model_at_end": true, "eval_steps": null, "report_to": ["jsonl"],
                       "warmup_ratio": 0.5, "seed": 1e20})";
  const trainhook::Host host(fake.table());
  CHECK(host.training_arg<int64_t>("logging_steps", 0) == 5);
  CHECK(host.training_arg<int>("logging_steps", 0) == 5);
  CHECK(host.training_arg<double>("learning_rate", 0) == 0.001);
  CHECK(host.training_arg<std::string>("run_name", "") == "r\xc3\xa9sum\xc3\xa9");
  CHECK(host.training_arg<bool>("load_best_model_at_end", false));
  // Absent or null: the caller's default.
  CHECK(host.training_arg<int64_t>("eval_steps", 7) == 7);
  CHECK(host.training_arg<std::string>("hub_model_id", "none") == "none");
  CHECK_THROWS_WITH_AS(host.training_arg<std::string>("logging_steps", ""),
                       "training argument 'logging_steps' is a number, expected a string", trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(host.training_arg<double>("report_to", 0),
                       "training argument 'report_to' is a list, expected a number", trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(host.training_arg<int64_t>("warmup_ratio", 0),
                       "training argument 'warmup_ratio' is 0.5, expected a whole number", trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(host.training_arg<int>("seed", 0), doctest::Contains("expected a whole number"),
                       trainhook::ConfigError);
  fake.args_json = R"({"seed": 4000000000})";
  CHECK_THROWS_WITH_AS(host.training_arg<int32_t>("seed", 0), doctest::Contains("out of range"),
                       trainhook::ConfigError);
  CHECK(host.training_arg<int64_t>("seed", 0) == 4000000000);
  fake.args_json = "[1, 2]";
  CHECK_THROWS_WITH_AS(host.training_arg<bool>("x", false),
                       doctest::Contains("the trainer's training arguments are not a JSON object"),
                       trainhook::ConfigError);
}

TEST_CASE("total_train_batch_size is HF's: per-device batch x accumulation x world size") {
  testkit::FakeHost fake;
  fake.args_json = R"({"per_device_train_batch_size": 32, "gradient_accumulation_steps": 2})";
  const trainhook::Host host(fake.table());
  th_state st{};
  st.world_size = 4;
  CHECK(host.total_train_batch_size(st) == 256);  // the argument when the state has no batch size yet
  st.train_batch_size = 16;
  CHECK(host.total_train_batch_size(st) == 128);  // the state's, as HF's _train_batch_size
  fake.args_json = "{}";
  st.world_size = 0;
  CHECK(host.total_train_batch_size(st) == 16);
}

TEST_CASE("the C readers of the training arguments: found, absent or null, wrong type") {
  const char* args = R"({"max_steps": 100, "fp16": false, "output_dir": "out", "optim": null})";
  char err[128] = {0};
  double d = -1;
  int64_t n = -1;
  int b = -1;
  char text[8];
  size_t len = 0;
  CHECK(th_args_number(args, "max_steps", &d, err, sizeof err) == 1);
  CHECK(d == 100);
  CHECK(th_args_int64(args, "max_steps", &n, err, sizeof err) == 1);
  CHECK(n == 100);
  CHECK(th_args_bool(args, "fp16", &b, err, sizeof err) == 1);
  CHECK(b == 0);
  CHECK(th_args_string(args, "output_dir", text, sizeof text, &len, err, sizeof err) == 1);
  CHECK(std::string(text) == "out");
  CHECK(len == 3);
  CHECK(th_args_string(args, "optim", text, sizeof text, &len, err, sizeof err) == 0);
  CHECK(th_args_number(args, "absent", &d, err, sizeof err) == 0);
  CHECK(d == 100);  // untouched
  CHECK(th_args_bool(args, "output_dir", &b, err, sizeof err) == -1);
  CHECK(std::string(err) == "training argument 'output_dir' is a string, expected a boolean");
  CHECK(th_args_number(nullptr, "x", &d, err, sizeof err) == -1);
  CHECK(std::string(err).find("not a JSON object") != std::string::npos);
}

TEST_CASE("the 1.1 wrappers refuse clearly on a host without model access (a 1.0 host)") {
  testkit::FakeHost fake;
  fake.set_struct_size(TH_STRUCT_SIZE(th_host, run_name));  // what a 1.0 host fills
  const trainhook::Host old(fake.table());
  CHECK_FALSE(old.has_model_access());
  CHECK_THROWS_WITH_AS(old.tensors(trainhook::Tensors::parameters),
                       doctest::Contains("needs a trainhook ABI 1.1 host"), std::invalid_argument);
  CHECK_THROWS_AS(old.add_metric("x", 1.0), std::invalid_argument);
  CHECK_THROWS_WITH_AS(old.set_critical(), doctest::Contains("needs a trainhook ABI 1.1 host"),
                       std::invalid_argument);
  th_state st{};
  th_control ctl{};
  th_event_args a = make_args(st, ctl, TH_EVENT_STEP_END);
  a.struct_size = static_cast<uint32_t>(TH_STRUCT_SIZE(th_event_args, prediction_kind));
  th_step_values sv{};
  a.step = &sv;  // beyond the 1.0 struct_size: never read
  CHECK(trainhook::Event(&a).step() == nullptr);
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  CHECK(trainhook::Event(&a).step() == &sv);
}

TEST_CASE("observed_events declares the observe-only events a class handles, and nothing on a 1.5 host") {
  testkit::FakeHost fake;
  CHECK(observed_on<Observer>(fake) == (TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_SAVE)));
  testkit::FakeHost plain;
  CHECK(observed_on<OnlyLog>(plain) == 0);  // no declaration: every event waited for
  testkit::FakeHost old;
  old.play_abi_minor(5);  // no set_observe_only in its table: not called, nothing breaks
  CHECK(observed_on<Observer>(old) == 0);
  // The C++ call a constructor may make, on both.
  trainhook::Host(fake.table()).set_observe_only(TH_EVENT_BIT(TH_EVENT_EVALUATE));
  CHECK(fake.observe_only == TH_EVENT_BIT(TH_EVENT_EVALUATE));
  trainhook::Host(old.table()).set_observe_only(TH_EVENT_BIT(TH_EVENT_EVALUATE));
  CHECK(old.observe_only == 0);
}

TEST_CASE("a class that keeps no state offers no save_state or load_state, so the trainer asks it nothing") {
  const th_callback_info stateless =
      trainhook::callback<Observer>("o", "1.0", trainhook::Kind::callback, "d");
  CHECK((stateless.vtable->save_state == nullptr));
  CHECK((stateless.vtable->load_state == nullptr));
  const th_callback_info saves = trainhook::callback<OnlyLog>("s", "1.0", trainhook::Kind::callback, "d");
  CHECK((saves.vtable->save_state != nullptr));
  CHECK((saves.vtable->load_state == nullptr));
  const th_callback_info hidden =
      trainhook::callback<PrivateState>("p", "1.0", trainhook::Kind::callback, "d");
  CHECK((hidden.vtable->save_state != nullptr));
  CHECK((hidden.vtable->load_state != nullptr));
}

TEST_CASE("side_by_side_events declares the side-by-side events a class handles, and nothing on a 1.7 host") {
  testkit::FakeHost fake;
  (void)observed_on<SideBySide>(fake);
  CHECK(fake.side_by_side == TH_EVENT_BIT(TH_EVENT_SAVE));
  CHECK(fake.observe_only == 0);
  testkit::FakeHost old;
  old.play_abi_minor(7);  // no set_side_by_side in its table: not called, nothing breaks
  (void)observed_on<SideBySide>(old);
  CHECK(old.side_by_side == 0);
  trainhook::Host(fake.table()).set_side_by_side(TH_EVENT_BIT(TH_EVENT_EVALUATE));
  CHECK(fake.side_by_side == TH_EVENT_BIT(TH_EVENT_EVALUATE));
  trainhook::Host(old.table()).set_side_by_side(TH_EVENT_BIT(TH_EVENT_EVALUATE));
  CHECK(old.side_by_side == 0);
}

TEST_CASE("a constructor's own set_observe_only wins over the class's observed_events") {
  testkit::FakeHost fake;
  CHECK(observed_on<Narrowing>(fake) == TH_EVENT_BIT(TH_EVENT_LOG));
  testkit::FakeHost steering;
  CHECK(observed_on<Narrowing>(steering, R"({"steer": true})") == 0);
}

TEST_CASE("Event::time is when the trainer emitted the event, the clock now from a host before 1.7") {
  th_state st{};
  th_control c{};
  th_event_args a{};
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  a.event = TH_EVENT_STEP_END;
  a.state = &st;
  a.control = &c;
  a.time_ns = 123456789;
  CHECK(trainhook::Event(&a).time().time_since_epoch() == std::chrono::nanoseconds(123456789));
  a.struct_size = static_cast<uint32_t>(TH_STRUCT_SIZE(th_event_args, failure));  // a 1.6 host
  const auto before = std::chrono::steady_clock::now();
  const auto t = trainhook::Event(&a).time();
  CHECK(t >= before);
  CHECK(t <= std::chrono::steady_clock::now());
}
