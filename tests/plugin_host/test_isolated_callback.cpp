// Isolated callbacks, torch-free: the wire protocol's round trip of
// th_event_args over a real socket pair, the isolation settings read from
// --plugin_isolation and plugin_config, and IsolatedCallback against the
// isolated_faults test plugin in a real trainhook-plugin-runner (control
// flags, metrics, logs, state; a crash named, then no second wait; back to
// sleep soon after answering), and its observe-only events through the event
// ring (in order with the calls that wait; dropped, counted and reported when
// the helper falls behind).
#include "host/plugin_callback.hpp"
#include "isolation/isolated_callback.hpp"
#include "isolation/isolation_protocol.hpp"
#include "registry/plugin_loader.hpp"

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>
#include <trainhook/plugin_host/isolation/isolation.hpp>
#include <trainhook/system_stats/proc_text.hpp>

#include <doctest/doctest.h>
#include <sanitizer.hpp>

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace trainhook;
namespace iso = trainhook::detail::isolation;

namespace {

struct Pair {
  int fd[2] = {-1, -1};
  Pair() { REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd) == 0); }
  ~Pair() {
    ::close(fd[0]);
    ::close(fd[1]);
  }
};

// The trainer's side, recorded.
struct FakeHost final : HostServices, ModelAccess {
  std::mutex mu;
  std::vector<std::string> logs;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::string> stops;
  void log(int32_t, const std::string& who, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu);
    logs.push_back(who + ": " + message);
  }
  std::string output_dir() const override { return "/tmp/out"; }
  std::string training_args_json() const override { return "{}"; }
  void request_stop(const std::string&, const std::string& reason) override { stops.push_back(reason); }
  std::string trainer_state_json() const override { return "{}"; }
  std::string model_description() const override { return "a model"; }
  std::string run_name() const override { return "run"; }
  std::string set_resume_checkpoint(const std::string&) override { return "no"; }
  ModelAccess* model_access() override { return this; }
  std::string tensors(int32_t, int32_t, th_tensor_list&) override { return "not here"; }
  std::string learning_rates(double* out, uint32_t capacity, uint32_t& count) override {
    count = 1;
    if (capacity > 0) out[0] = 1e-3;
    return "";
  }
  std::string set_lr_factor(double) override { return ""; }
  double lr_factor() const override { return 1.0; }
  std::string add_metric(const std::string& name, double value) override {
    metrics.emplace_back(name, value);
    return "";
  }
  std::string skip_optimizer_step() override { return ""; }
  bool logged(const std::string& part) {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& l : logs)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
  // The log lines containing `part`, in the order they came.
  std::vector<std::string> lines_with(const std::string& part) {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& l : logs)
      if (l.find(part) != std::string::npos) out.push_back(l);
    return out;
  }
};

std::string faults_library() {
  return std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/isolated_faults/libtrainhook_isolated_faults.so";
}

struct TestEvent {
  th_state state{};
  th_control control{};
  th_event_args args{};
  explicit TestEvent(int32_t event, int64_t step) {
    state.struct_size = TH_STATE_STRUCT_SIZE;
    state.global_step = step;
    control.struct_size = TH_CONTROL_STRUCT_SIZE;
    args.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
    args.event = event;
    args.state = &state;
    args.control = &control;
    args.batch_index = -1;
    args.batch_count = -1;
  }
};

}  // namespace

TEST_CASE(
    "th_event_args cross the socket whole (state and its strings and control and values and step values)") {
  Pair p;
  th_state st{};
  st.struct_size = TH_STATE_STRUCT_SIZE;
  st.epoch = 1.5;
  st.global_step = 42;
  st.best_model_checkpoint = "out/checkpoint-40";
  st.trial_name = nullptr;
  st.world_size = 1;
  th_control c{TH_CONTROL_STRUCT_SIZE, 0, 1, 0, 1, 0};
  const char* keys[] = {"loss", "learning_rate"};
  const double values[] = {0.25, 1e-3};
  const char* skeys[] = {"note"};
  const char* svals[] = {"hello"};
  th_values v{TH_VALUES_STRUCT_SIZE, 2, keys, values, 1, skeys, svals};
  th_step_values step{TH_STEP_VALUES_STRUCT_SIZE, 0.5, std::nan(""), 2e-3};
  th_event_args a{
      TH_EVENT_ARGS_STRUCT_SIZE, TH_EVENT_LOG, &st, &c, &v, "ckpt", 3, 7, 1, &step, nullptr, 987654321};

  iso::Writer w;
  iso::Channel out(p.fd[0]), in(p.fd[1]);
  for (int round = 0; round < 3; ++round) {  // buffers are reused from one message to the next
    iso::write_event(w, a, iso::Msg::Event, 7 + static_cast<uint64_t>(round));
    REQUIRE(out.send(w.finish()));
    REQUIRE(in.receive(std::chrono::steady_clock::now() + std::chrono::seconds(5)) ==
            iso::Channel::Result::message);
    CHECK(in.type() == iso::Msg::Event);
    iso::EventStorage storage;
    th_event_args got{};
    iso::Reader r = in.payload();
    CHECK(r.u64() == 7 + static_cast<uint64_t>(round));  // the call's number comes first
    iso::read_event(r, storage, got);
    CHECK(got.event == TH_EVENT_LOG);
    CHECK(got.state->global_step == 42);
    CHECK(got.state->epoch == 1.5);
    CHECK(std::string(got.state->best_model_checkpoint) == "out/checkpoint-40");
    CHECK(got.state->trial_name == nullptr);
    CHECK(got.control->should_epoch_stop == 1);
    CHECK(got.control->should_evaluate == 1);
    REQUIRE(got.values != nullptr);
    CHECK(got.values->count == 2);
    CHECK(std::string(got.values->keys[1]) == "learning_rate");
    CHECK(got.values->values[0] == 0.25);
    CHECK(got.values->string_count == 1);
    CHECK(std::string(got.values->string_values[0]) == "hello");
    CHECK(std::string(got.checkpoint_dir) == "ckpt");
    CHECK(got.batch_index == 3);
    CHECK(got.batch_count == 7);
    CHECK(got.prediction_kind == 1);
    REQUIRE(got.step != nullptr);
    CHECK(got.step->loss == 0.5);
    CHECK(std::isnan(got.step->grad_norm));
    CHECK(got.time_ns == 987654321);  // the trainer's emission time, not the helper's clock
  }
  ::close(p.fd[0]);
  p.fd[0] = -1;
  CHECK(in.receive(std::chrono::steady_clock::now() + std::chrono::seconds(5)) ==
        iso::Channel::Result::closed);
}

TEST_CASE("the failure of on_exception crosses the socket and a frame without it reads as none") {
  th_state st{};
  st.struct_size = TH_STATE_STRUCT_SIZE;
  st.global_step = 20;
  th_control c{TH_CONTROL_STRUCT_SIZE, 0, 0, 0, 0, 0};
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_OUT_OF_MEMORY, "out of memory: std::bad_alloc",
                           19};
  th_event_args a{TH_EVENT_ARGS_STRUCT_SIZE,
                  TH_EVENT_EXCEPTION,
                  &st,
                  &c,
                  nullptr,
                  nullptr,
                  -1,
                  -1,
                  0,
                  nullptr,
                  &failure,
                  5};
  iso::Writer w;
  iso::write_event(w, a, iso::Msg::Event, 1);
  const std::string frame = w.finish();
  const std::string payload = frame.substr(5 + 8);  // after the length, the type and the call's number
  iso::EventStorage storage;
  th_event_args got{};
  iso::Reader r(payload.data(), payload.size());
  iso::read_event(r, storage, got);
  CHECK(got.event == TH_EVENT_EXCEPTION);
  REQUIRE(got.failure != nullptr);
  CHECK(got.failure->struct_size == TH_FAILURE_STRUCT_SIZE);
  CHECK(got.failure->kind == TH_FAILURE_OUT_OF_MEMORY);
  CHECK(got.failure->step == 19);
  CHECK(std::string(got.failure->message) == "out of memory: std::bad_alloc");

  CHECK(got.time_ns == 5);

  // Another event: no failure; and frames of older senders read the same: one
  // before 1.7 ends before the time (read as the time it arrived), one before
  // 1.3 also before the failure's flag byte.
  a.event = TH_EVENT_STEP_END;
  a.failure = nullptr;
  iso::write_event(w, a, iso::Msg::Event, 2);
  const std::string plain = w.finish().substr(5 + 8);
  for (const size_t cut : {size_t{0}, size_t{8}, size_t{9}}) {
    CAPTURE(cut);
    iso::Reader pr(plain.data(), plain.size() - cut);
    th_event_args got2{};
    const auto before = std::chrono::steady_clock::now().time_since_epoch();
    iso::read_event(pr, storage, got2);
    CHECK(got2.event == TH_EVENT_STEP_END);
    CHECK(got2.failure == nullptr);
    CHECK(got2.state->global_step == 20);
    if (cut == 0)
      CHECK(got2.time_ns == 5);
    else
      CHECK(got2.time_ns >= std::chrono::duration_cast<std::chrono::nanoseconds>(before).count());
  }
}

TEST_CASE("a receive with nothing to read times out") {
  Pair p;
  iso::Channel in(p.fd[1]);
  CHECK(in.receive(std::chrono::steady_clock::now() + std::chrono::milliseconds(50)) ==
        iso::Channel::Result::timed_out);
}

TEST_CASE("a frame longer than any message is refused, not buffered") {
  Pair p;
  iso::Channel in(p.fd[1]);
  const uint32_t length = iso::kMaxFrameBytes + 1;
  char header[5];
  std::memcpy(header, &length, sizeof length);
  header[4] = static_cast<char>(iso::Msg::Done);
  REQUIRE(::write(p.fd[0], header, sizeof header) == 5);
  CHECK_THROWS_WITH_AS(in.receive(std::chrono::steady_clock::time_point::max()),
                       doctest::Contains("at most 268435456"), std::runtime_error);
}

TEST_CASE("the runner's replies are read within their bounds and a malformed one is an error") {
  iso::Writer w;
  w.begin_call(iso::Msg::Created, 1);
  w.u8(1);
  w.u64(~uint64_t{0});  // more events than there are
  w.u8(0);
  w.u8(1);
  w.u8(0);
  w.str("");
  w.u64(~uint64_t{0});  // observe-only: every bit, TRAIN_END and EXCEPTION too
  w.u8(1);
  w.u64(~uint64_t{0});  // side by side: every bit, observe-only ones too
  const std::string created = w.finish();
  const iso::CreatedReply c = iso::read_created(iso::Reader(created.data() + 5, created.size() - 5));
  CHECK(c.call == 1);
  CHECK(c.ok);
  CHECK(c.event_mask == TH_EVENT_MASK_ALL);
  CHECK(c.has_save_state);
  CHECK(c.reads_ring);
  CHECK((c.observe_only & TH_EVENT_BIT(TH_EVENT_TRAIN_END)) == 0);
  CHECK((c.observe_only & TH_EVENT_BIT(TH_EVENT_EXCEPTION)) == 0);
  CHECK((c.observe_only & TH_EVENT_BIT(TH_EVENT_LOG)) != 0);
  // Side by side are only the waited events: here the two always waited for.
  CHECK(c.side_by_side == (TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION)));
  // A runner before side by side stops after the ring flag.
  const iso::CreatedReply v4 = iso::read_created(iso::Reader(created.data() + 5, created.size() - 8 - 5));
  CHECK(v4.reads_ring);
  CHECK(v4.side_by_side == 0);
  // An older runner stops after the error text: nothing observe-only, no ring.
  const size_t old_size = created.size() - 17;
  const iso::CreatedReply old = iso::read_created(iso::Reader(created.data() + 5, old_size - 5));
  CHECK(old.observe_only == 0);
  CHECK_FALSE(old.reads_ring);
  CHECK(old.side_by_side == 0);
  CHECK_THROWS_AS(iso::read_created(iso::Reader(created.data() + 5, 6 + 8)), std::runtime_error);

  w.begin(iso::Msg::ReqLearningRates);
  w.u32(~uint32_t{0});
  const std::string rates = w.finish();
  CHECK(iso::read_runner_message(iso::Msg::ReqLearningRates, iso::Reader(rates.data() + 5, rates.size() - 5))
            .capacity == iso::kMaxLearningRates);
  CHECK_THROWS_WITH_AS(iso::read_runner_message(iso::Msg::Created, iso::Reader(rates.data() + 5, 0)),
                       doctest::Contains("unexpected message"), std::runtime_error);
  CHECK_THROWS_AS(iso::read_runner_message(iso::Msg::ReqAddMetric, iso::Reader(rates.data() + 5, 4)),
                  std::runtime_error);
}

TEST_CASE(
    "isolation settings: the policy's verdict, the plugin_config keys (consumed and never passed on) and the "
    "bound") {
  const nlohmann::json cfg = {{"a", {{"isolation", "process"}, {"isolation_timeout", 2}, {"x", 1}}},
                              {"b", {{"y", 2}}}};
  const IsolationDefault in_process{false, true}, isolated{true, true}, named{true, false};
  PluginIsolation a = plugin_isolation_of(in_process, cfg, "a");
  CHECK(a.isolated);
  CHECK(a.by_section);
  CHECK(a.timeout_seconds == 2);
  CHECK(a.plugin_config == R"({"x":1})");
  PluginIsolation b = plugin_isolation_of(isolated, cfg, "b");
  CHECK(b.isolated);
  CHECK_FALSE(b.by_section);
  CHECK(b.timeout_seconds == kDefaultIsolationTimeoutSeconds);
  CHECK(b.plugin_config == R"({"y":2})");
  CHECK_FALSE(plugin_isolation_of(in_process, cfg, "c").isolated);
  CHECK(plugin_isolation_of(in_process, cfg, "c").plugin_config == "{}");
  // The key wins over the policy (auto's trust, none), not over a name on the command line.
  const nlohmann::json stay = {{"a", {{"isolation", "in_process"}}}};
  CHECK_FALSE(plugin_isolation_of(isolated, stay, "a").isolated);
  CHECK(plugin_isolation_of(isolated, stay, "a").by_section);
  CHECK(plugin_isolation_of(named, stay, "a").isolated);
  CHECK_FALSE(plugin_isolation_of(named, stay, "a").by_section);
  CHECK(plugin_isolation_of(named, stay, "a").plugin_config == "{}");
  CHECK_THROWS_AS(plugin_isolation_of(named, {{"a", {{"isolation", "thread"}}}}, "a"), ArgumentError);
  CHECK_THROWS_AS(plugin_isolation_of(in_process, {{"a", {{"isolation_timeout", 0}}}}, "a"), ArgumentError);
  // The environment's bound: for isolated callbacks without their own; checked only then.
  ::setenv(kIsolationTimeoutEnv, "7", 1);
  CHECK(plugin_isolation_of(isolated, cfg, "b").timeout_seconds == 7);
  CHECK(plugin_isolation_of(in_process, cfg, "a").timeout_seconds == 2);
  ::setenv(kIsolationTimeoutEnv, "soon", 1);
  CHECK_NOTHROW(plugin_isolation_of(in_process, cfg, "b"));
  CHECK_THROWS_AS(plugin_isolation_of(isolated, cfg, "b"), ArgumentError);
  ::unsetenv(kIsolationTimeoutEnv);
}

TEST_CASE(
    "an isolated callback steers the run, reports metrics and logs, keeps state, from its own process") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, R"({"save_step":3})", 10);
  CHECK(cb.name() == "isolated_faults");
  CHECK(cb.event_mask() == TH_EVENT_MASK_ALL);
  CHECK(cb.observed_mask() == 0);  // declared nothing: every event is a round trip, as before ABI 1.6
  CHECK(cb.helper_pid() != ::getpid());
  CHECK(host.logged("isolated_faults: isolated_faults: created in pid " + std::to_string(cb.helper_pid())));
  for (int64_t s = 1; s <= 3; ++s) {
    TestEvent e(TH_EVENT_STEP_END, s);
    cb.on_event(TH_EVENT_STEP_END, e.args);
    CHECK(e.control.should_save == (s == 3 ? 1 : 0));
  }
  REQUIRE(host.metrics.size() == 3);
  CHECK(host.metrics[2] == std::make_pair(std::string("isolated_metric"), 1.5));
  CHECK(
      host.logged("runs in its own process (plugin_isolation): the model's tensors are not shared with it"));
  const auto state = cb.save_state();
  REQUIRE(state.has_value());
  CHECK((*state)["attributes"]["calls"] == 3);
  cb.load_state(*state);
}

TEST_CASE("a callback told at creation that it runs isolated (th_host.isolated) refuses there") {
  // tensor_reader (tests/sdk/tensor_reader_plugin.cpp) needs tensor views.
  FakeHost host;
  const std::string library =
      std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/tensor_reader/libtrainhook_tensor_reader.so";
  try {
    detail::IsolatedCallback cb(library, "tensor_reader", host, "{}", 10);
    FAIL("tensor_reader was created in its helper process");
  } catch (const PluginError& e) {
    const std::string what = e.what();
    CHECK_MESSAGE(
        what.find("tensor_reader reads the model's tensors, which an isolated callback is not given") !=
            std::string::npos,
        what);
    CHECK(what.find("(in its isolated helper process)") != std::string::npos);
  }
}

TEST_CASE(
    "an isolated callback hears on_exception with its failure and th_host.stop_signal from the trainer") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, "{}", 10);
  // The trainer's signal handler recorded a first SIGTERM: the runner is told before the next event.
  record_stop_signal(15);
  TestEvent end(TH_EVENT_TRAIN_END, 4);
  cb.on_event(TH_EVENT_TRAIN_END, end.args);
  record_stop_signal(0);
  CHECK(host.logged("isolated_faults: stop_signal 15"));
  TestEvent ex(TH_EVENT_EXCEPTION, 7);
  const th_failure failure{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_PLUGIN,
                           "callback 'x' failed in on_step_end: no", 7};
  ex.args.failure = &failure;
  cb.on_event(TH_EVENT_EXCEPTION, ex.args);
  CHECK(host.logged("isolated_faults: on_exception kind 2 step 7: callback 'x' failed in on_step_end: no"));
  // Back to 0 (a later run): told again.
  cb.on_event(TH_EVENT_TRAIN_END, end.args);
  CHECK(host.logged("isolated_faults: stop_signal 0"));
}

using trainhook::testkit::kSegvCause;  // the sanitizer build sees the helper's exit status instead

TEST_CASE("a crash in the helper is named with the call and the cause and later calls fail at once") {
  FakeHost host;
  auto cb = std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_faults", host,
                                                       R"({"fault":"segv","fault_step":2})", 10);
  TestEvent ok(TH_EVENT_STEP_END, 1);
  cb->on_event(TH_EVENT_STEP_END, ok.args);
  TestEvent bad(TH_EVENT_STEP_END, 2);
  std::string message;
  try {
    cb->on_event(TH_EVENT_STEP_END, bad.args);
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK(message.find("isolated callback 'isolated_faults' from " + faults_library()) != std::string::npos);
  CHECK(message.find(std::string("in on_step_end: its helper process ") + kSegvCause) != std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(cb->on_event(TH_EVENT_STEP_END, ok.args), doctest::Contains(kSegvCause),
                       std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  cb.reset();  // nothing left to reap; must not wait
}

TEST_CASE(
    "a hang is bounded by the timeout (the helper killed) and a bad config is a PluginError naming it") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, R"({"fault":"hang","fault_step":1})",
                              0.5);
  TestEvent e(TH_EVENT_STEP_END, 1);
  CHECK_THROWS_WITH_AS(cb.on_event(TH_EVENT_STEP_END, e.args),
                       doctest::Contains("did not answer within 0.5 s"), std::runtime_error);
  CHECK_THROWS_WITH_AS(
      detail::IsolatedCallback(faults_library(), "isolated_faults", host, R"({"isolation":"process"})", 5),
      doctest::Contains("isolated_faults: unknown key"), PluginError);
  CHECK_THROWS_WITH_AS(detail::IsolatedCallback(faults_library(), "no_such", host, "{}", 5),
                       doctest::Contains("exports no callback 'no_such'"), PluginError);
}

TEST_CASE(
    "observe-only events reach an isolated callback without a round trip, in order with the calls that "
    "wait") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, R"({"observe":1})", 10);
  CHECK(cb.observed_mask() == (TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_LOG)));
  constexpr int64_t kSteps = 50;
  for (int64_t s = 1; s <= kSteps; ++s) {
    TestEvent begin(TH_EVENT_STEP_BEGIN, s);
    cb.on_event(TH_EVENT_STEP_BEGIN, begin.args);  // the ring
    TestEvent end(TH_EVENT_STEP_END, s);
    cb.on_event(TH_EVENT_STEP_END, end.args);  // a round trip: after on_step_begin s
    TestEvent log(TH_EVENT_LOG, s);
    cb.on_event(TH_EVENT_LOG, log.args);  // the ring
  }
  TestEvent train_end(TH_EVENT_TRAIN_END, kSteps);
  cb.on_event(TH_EVENT_TRAIN_END, train_end.args);  // waits for every observed event before it
  CHECK(host.metrics.size() == static_cast<size_t>(kSteps));
  const std::vector<std::string> seen = host.lines_with("isolated_faults: observed ");
  REQUIRE(seen.size() == 2 * kSteps);
  for (int64_t s = 1; s <= kSteps; ++s) {
    const std::string begin = "observed on_step_begin " + std::to_string(s),
                      log = "observed on_log " + std::to_string(s);
    CHECK(seen[2 * (s - 1)].substr(seen[2 * (s - 1)].size() - begin.size()) == begin);
    CHECK(seen[2 * (s - 1) + 1].substr(seen[2 * (s - 1) + 1].size() - log.size()) == log);
  }
  const std::vector<std::string> ends = host.lines_with("on_train_end at step");
  CHECK(ends.size() == 1);
  CHECK(cb.dropped_events() == 0);
  CHECK_FALSE(host.logged("dropped"));
}

// A process's CPU time so far, in clock ticks (utime + stime of /proc/PID/stat).
uint64_t cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::optional<uint64_t> ticks = system_stats::parse_proc_stat_cpu_ticks(text);
  REQUIRE(ticks.has_value());
  return *ticks;
}

// The CPU a process uses over the next half second with no call, in ms.
// The training thread's work between two events: busy, never asleep.
void busy_for(std::chrono::microseconds d) {
  const auto from = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - from < d) {
  }
}

uint64_t idle_cpu_ms(pid_t pid) {
  const uint64_t before = cpu_ticks(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return (cpu_ticks(pid) - before) * 1000 / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
}

TEST_CASE("a helper looks for the next call only briefly after answering one, then sleeps") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, "{}", 10);
  for (int64_t s = 1; s <= 20; ++s) {  // calls back to back: each finds the helper awake or wakes it
    TestEvent e(TH_EVENT_STEP_END, s);
    cb.on_event(TH_EVENT_STEP_END, e.args);
  }
  // Half a second with no call: a helper that kept looking would use most of
  // it (a few hundred ms of CPU, even sharing a core); one asleep uses none.
  CHECK(idle_cpu_ms(cb.helper_pid()) < 100);
  TestEvent later(TH_EVENT_STEP_END, 21);  // and a call after the sleep is answered
  cb.on_event(TH_EVENT_STEP_END, later.args);
  CHECK(host.metrics.size() == 21);
}

TEST_CASE("calls at a steady beat are answered in order, and once they stop the helper soon sleeps") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, "{}", 10);
  // 300 us apart: the helper learns the beat and wakes itself
  // before each call is due (wake_policy.hpp).
  for (int64_t s = 1; s <= 50; ++s) {
    busy_for(std::chrono::microseconds(300));  // the step's work
    TestEvent e(TH_EVENT_STEP_END, s);
    cb.on_event(TH_EVENT_STEP_END, e.args);
  }
  CHECK(host.metrics.size() == 50);
  // The beat stopped: the helper looks for one more call in one window, then
  // sleeps; one that kept waking at the beat would use a large part of the
  // half second.
  CHECK(idle_cpu_ms(cb.helper_pid()) < 100);
  TestEvent later(TH_EVENT_STEP_END, 51);
  cb.on_event(TH_EVENT_STEP_END, later.args);
  CHECK(host.metrics.size() == 51);
}

TEST_CASE("a helper that falls behind loses observe-only events, counted and reported naming the callback") {
  FakeHost host;
  // A 4 KiB ring holds a dozen events; the helper sleeps a second at the first one.
  ::setenv(kIsolationRingEnv, "4", 1);
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host, R"({"observe":1,"stall_ms":1000})",
                              10);
  ::unsetenv(kIsolationRingEnv);
  constexpr uint64_t kLogs = 400;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t s = 1; s <= kLogs; ++s) {
    TestEvent log(TH_EVENT_LOG, static_cast<int64_t>(s));
    cb.on_event(TH_EVENT_LOG, log.args);  // never waits for the stalled helper
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(900));
  CHECK(cb.dropped_events() > 0);
  CHECK(host.logged("isolated callback 'isolated_faults' from " + faults_library() +
                    ": its helper falls behind and the event ring (4 KiB"));
  TestEvent train_end(TH_EVENT_TRAIN_END, kLogs);
  cb.on_event(TH_EVENT_TRAIN_END, train_end.args);
  const std::vector<std::string> seen = host.lines_with("isolated_faults: observed on_log ");
  CHECK(seen.size() + cb.dropped_events() == kLogs);
  int64_t last = 0;
  for (const std::string& l : seen) {
    const int64_t step = std::stoll(l.substr(l.rfind(' ') + 1));
    CHECK(step > last);
    last = step;
  }
  CHECK(host.logged(std::to_string(cb.dropped_events()) + " observe-only event(s) dropped in all"));
  CHECK(host.logged("(on_log: " + std::to_string(cb.dropped_events()) + ")"));
}

TEST_CASE(
    "isolated calls declared side by side overlap: one waits at on_save for a file the next one creates") {
  char folder[] = "/tmp/trainhook-side-by-side-XXXXXX";
  REQUIRE(::mkdtemp(folder) != nullptr);
  const std::string met = std::string(folder) + "/b-saved";
  FakeHost host;
  CallbackHandler handler;
  // One on_save: a returns once b's on_save has begun; called in turn, a
  // fails after 5 s (as it does below when they are not declared side by side).
  const auto save = [&](const char* side_by_side) {
    const std::string declared = std::string(R"({"side_by_side":)") + side_by_side;
    handler.add(std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_faults", host,
                                                           declared + R"(,"meet":")" + met + R"("})", 20));
    handler.add(std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_partner", host,
                                                           declared + R"(,"mark":")" + met + R"("})", 20));
    TrainerState state;
    TrainerControl control;
    handler.fire(TH_EVENT_SAVE, state, control);
    return control;
  };
  SUBCASE("declared: both are answered") {
    CHECK_FALSE(save("1").should_training_stop);
    CHECK(handler.disabled().empty());
  }
  SUBCASE("not declared: called in turn, the first waits in vain") {
    save("0");
    REQUIRE(handler.disabled().size() == 1);
    CHECK(handler.disabled()[0].message.find("did not appear within 5 s") != std::string::npos);
  }
  std::filesystem::remove_all(folder);
}

TEST_CASE("a flag set in an event declared side by side is not taken and is the callback's failure") {
  FakeHost host;
  CallbackHandler handler;
  handler.add(std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_faults", host,
                                                         R"({"side_by_side":1,"steer_save":1})", 10));
  TrainerState state;
  TrainerControl control;
  handler.fire(TH_EVENT_SAVE, state, control);
  CHECK_FALSE(control.should_training_stop);
  REQUIRE(handler.disabled().size() == 1);
  // Refused in the helper itself, as in process (PluginCallback), named.
  CHECK(handler.disabled()[0].message ==
        "it changed TrainerControl (should_training_stop) in on_save, which it declared side by side "
        "(set_side_by_side / side_by_side_events): a declared event may not steer the run (refused in process "
        "as in its own process); declare only the events in which it does not steer");
}

// A helper that attacks the trainer: each attack is contained, named, and
// never crashes, misleads or stalls the trainer.

TEST_CASE("a helper that shrinks the event ring cannot: the trainer writes on, the memory is sealed") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host,
                              R"({"observe":1,"fault":"shrink_ring","fault_step":2})", 10);
  for (int64_t s = 1; s <= 5; ++s) {
    TestEvent begin(TH_EVENT_STEP_BEGIN, s);
    cb.on_event(TH_EVENT_STEP_BEGIN, begin.args);  // the trainer writes into the ring
    TestEvent end(TH_EVENT_STEP_END, s);
    cb.on_event(TH_EVENT_STEP_END, end.args);
  }
  CHECK(host.logged("isolated_faults: shrinking the ring at step 2 -> -1"));
  CHECK(host.lines_with("isolated_faults: observed on_step_begin").size() == 5);
}

TEST_CASE("a call answered twice kills the helper and fails the callback, naming what it sent") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host,
                              R"({"fault":"stray_answer","fault_step":2})", 10);
  TestEvent one(TH_EVENT_STEP_END, 1);
  cb.on_event(TH_EVENT_STEP_END, one.args);
  // Step 2: the forged answer carries this call's number (it comes first), so
  // the real one arrives as a second answer to the same call at step 3.
  TestEvent two(TH_EVENT_STEP_END, 2);
  cb.on_event(TH_EVENT_STEP_END, two.args);
  TestEvent three(TH_EVENT_STEP_END, 3);
  CHECK_THROWS_WITH_AS(cb.on_event(TH_EVENT_STEP_END, three.args),
                       doctest::Contains("in on_step_end: its helper process broke the protocol (it answered "
                                         "call #3 while call #4 was due; it was killed)"),
                       std::runtime_error);
  // Nothing later is taken from it: every call fails at once.
  TestEvent four(TH_EVENT_STEP_END, 4);
  CHECK_THROWS_WITH_AS(cb.on_event(TH_EVENT_STEP_END, four.args), doctest::Contains("broke the protocol"),
                       std::runtime_error);
}

TEST_CASE("an answer that comes when no call is due kills the helper") {
  FakeHost host;
  detail::IsolatedCallback cb(faults_library(), "isolated_faults", host,
                              R"({"observe":1,"fault":"stray_answer","fault_step":2})", 10);
  // on_step_end waits; the stray answer at step 2 is taken for it and the
  // real one is left over. The next call meets it: a breach.
  std::string message;
  for (int64_t s = 1; s <= 4 && message.empty(); ++s) {
    try {
      TestEvent end(TH_EVENT_STEP_END, s);
      cb.on_event(TH_EVENT_STEP_END, end.args);
      TestEvent log(TH_EVENT_LOG, s);
      cb.on_event(TH_EVENT_LOG, log.args);  // observed: serves what the helper sent unasked
    } catch (const std::exception& e) {
      message = e.what();
    }
  }
  CHECK_MESSAGE(message.find("broke the protocol") != std::string::npos, message);
  CHECK(message.find("it was killed") != std::string::npos);
}

TEST_CASE("a helper's descriptors are close-on-exec, and its death is seen at once whoever holds its socket") {
  FakeHost host;
  // The daemon it forks keeps the helper's socket open for 20 s; the trainer
  // must not wait for the socket's end (nor for isolation_timeout) to know.
  auto cb = std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_faults", host,
                                                       R"({"fault":"daemon_segv","fault_step":1})", 30);
  CHECK(host.logged("isolated_faults: descriptors 3 and 4 close-on-exec: yes"));
  TestEvent e(TH_EVENT_STEP_END, 1);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(cb->on_event(TH_EVENT_STEP_END, e.args),
                       doctest::Contains((std::string("its helper process ") + kSegvCause).c_str()), std::runtime_error);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  cb.reset();
}

namespace {
// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
bool ended(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z');
}
}  // namespace

TEST_CASE("a helper ends with its trainer even when another process holds the trainer's end of its socket") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t trainer = ::fork();
  REQUIRE(trainer >= 0);
  if (trainer == 0) {
    // The trainer: starts a helper, lets a daemon inherit its end of the
    // socket (an in-process plugin's fork), then dies as under kill -9.
    FakeHost host;
    auto* cb = new detail::IsolatedCallback(faults_library(), "isolated_faults", host, "{}", 10);
    const pid_t daemon = ::fork();
    if (daemon == 0) {
      ::sleep(30);
      ::_exit(0);
    }
    const pid_t pids[2] = {cb->helper_pid(), daemon};
    if (::write(pipe_fds[1], pids, sizeof pids) != sizeof pids) ::_exit(2);
    ::_exit(0);  // no destructor: the helper is told nothing
  }
  ::close(pipe_fds[1]);
  pid_t pids[2] = {-1, -1};
  REQUIRE(::read(pipe_fds[0], pids, sizeof pids) == sizeof pids);
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(trainer, &status, 0);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ended(pids[0]) && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(ended(pids[0]));
  ::kill(pids[1], SIGKILL);
  ::kill(pids[0], SIGKILL);  // if it did not end
}

TEST_CASE("a steering call in an observed event is refused in the helper as in process, and is its failure") {
  for (const char* call : {"request_stop", "add_metric", "set_lr_factor"}) {
    CAPTURE(call);
    FakeHost host;
    detail::IsolatedCallback cb(faults_library(), "isolated_faults", host,
                                std::string(R"({"observe":1,"steer_call":")") + call + "\"}", 10);
    std::string message;
    for (int64_t s = 1; s <= 3 && message.empty(); ++s) {
      try {
        TestEvent log(TH_EVENT_LOG, s);
        cb.on_event(TH_EVENT_LOG, log.args);
        TestEvent end(TH_EVENT_TRAIN_END, s);  // waits for what the helper runs first
        cb.on_event(TH_EVENT_TRAIN_END, end.args);
      } catch (const std::exception& e) {
        message = e.what();
      }
    }
    CHECK_MESSAGE(message.find(std::string("on_log (observed, delivered without a round trip) failed: ") + call +
                               " in on_log, which it declared observe-only") != std::string::npos,
                  message);
    CHECK(host.stops.empty());
    CHECK(host.metrics.empty());
  }
}

namespace {
// The callback `name` of `library`, created in this process (pinned or trusted).
std::unique_ptr<detail::PluginCallback> in_process(const std::string& library, const std::string& name,
                                                   HostServices& host, const std::string& config) {
  LibraryRecord rec;
  rec.path = library;
  std::shared_ptr<const detail::PluginLibrary> lib = detail::load_plugin_library(library, rec);
  REQUIRE_MESSAGE(lib != nullptr, rec.refused_reason);
  const th_callback_info* info = detail::find_callback(*lib, name);
  REQUIRE(info != nullptr);
  return std::make_unique<detail::PluginCallback>(lib, *info, host, config);
}
}  // namespace

TEST_CASE("a declared event does not steer in process either: one seed, one model, wherever it runs") {
  SUBCASE("a steering call in an observe-only event is refused and is the call's failure") {
    for (const char* call : {"request_stop", "add_metric", "set_lr_factor"}) {
      CAPTURE(call);
      FakeHost host;
      auto cb = in_process(faults_library(), "isolated_faults", host,
                           std::string(R"({"observe":1,"steer_call":")") + call + "\"}");
      TestEvent log(TH_EVENT_LOG, 1);
      CHECK_THROWS_WITH_AS(cb->on_event(TH_EVENT_LOG, log.args),
                           doctest::Contains((std::string(call) + " in on_log, which it declared observe-only").c_str()),
                           std::runtime_error);
      CHECK(host.stops.empty());
      CHECK(host.metrics.empty());
      // Not declared there: the same call is taken.
      TestEvent end(TH_EVENT_STEP_END, 1);
      cb->on_event(TH_EVENT_STEP_END, end.args);
      CHECK(host.metrics.size() == 1);
    }
  }
  SUBCASE("a flag set in an observe-only event is refused, with the message the helper gives") {
    FakeHost host;
    auto cb = in_process(faults_library(), "isolated_faults", host, R"({"observe":1,"steer_observed":1})");
    TestEvent log(TH_EVENT_LOG, 1);
    CHECK_THROWS_WITH_AS(cb->on_event(TH_EVENT_LOG, log.args),
                         "it changed TrainerControl (should_training_stop) in on_log, which it declared "
                         "observe-only (set_observe_only / observed_events): a declared event may not steer the "
                         "run (refused in process as in its own process); declare only the events in which it "
                         "does not steer",
                         std::runtime_error);
  }
}

TEST_CASE("an exception out of create() names the callback and its file, in process and isolated") {
  const std::string library =
      std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/create_throw/libtrainhook_create_throw.so";
  FakeHost host;
  CHECK_THROWS_WITH_AS(in_process(library, "create_throw", host, "{}"),
                       ("cannot create callback 'create_throw' from " + library +
                        ": create() threw an exception through the C ABI: thrown by create")
                           .c_str(),
                       PluginError);
  CHECK_THROWS_WITH_AS(detail::IsolatedCallback(library, "create_throw", host, "{}", 10),
                       doctest::Contains(("cannot create callback 'create_throw' from " + library +
                                          ": create() threw an exception through the C ABI: thrown by create")
                                             .c_str()),
                       PluginError);
}

// The runner loads the plugin through /proc/self/fd/N too (the descriptor it
// was passed, or the one it opened): what the plugin finds beside it through
// $ORIGIN is loaded first from the plugin's real folder.
TEST_CASE("a pack whose plugin needs the library beside it through RUNPATH $ORIGIN runs isolated") {
  const std::string library =
      std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/origin_pack/libtrainhook_origin_pack.so";
  FakeHost host;
  detail::IsolatedCallback cb(library, "origin_pack", host, "{}", 10);
  CHECK(cb.helper_pid() != ::getpid());
  CHECK(host.logged("origin_pack: origin_dep answers 42"));  // its create() called the helper library
  TestEvent end(TH_EVENT_TRAIN_END, 1);
  cb.on_event(TH_EVENT_TRAIN_END, end.args);
}

TEST_CASE("an isolated callback that asks to write the model's tensors stops the run, naming how to trust it") {
  FakeHost host;
  const std::string library =
      std::string(TRAINHOOK_TEST_PLUGIN_ROOT) + "/isolated_faults/libtrainhook_isolated_faults.so";
  detail::IsolatedCallback cb(library, "isolated_faults", host, R"({"write_tensors":1})", 10);
  TestEvent end(TH_EVENT_STEP_END, 1);
  cb.on_event(TH_EVENT_STEP_END, end.args);
  REQUIRE(host.stops.size() == 1);
  CHECK(host.stops[0].find("asked to write the model's tensors") != std::string::npos);
  CHECK(host.stops[0].find("plugin_lock") != std::string::npos);
}

TEST_CASE("a plugin thread's stop request while isolated reaches the trainer by the next step boundary") {
  FakeHost host;
  CallbackHandler handler;
  // isolated_budget has no event between train begin and end; its thread asks for a stop.
  handler.add(std::make_unique<detail::IsolatedCallback>(faults_library(), "isolated_budget", host, "{}", 10));
  TrainerState state;
  TrainerControl control;
  handler.fire(TH_EVENT_TRAIN_BEGIN, state, control);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (host.stops.empty() && std::chrono::steady_clock::now() < give_up) {
    ++state.global_step;
    handler.fire(TH_EVENT_STEP_END, state, control);  // a step boundary: nothing of its own to run
    if (host.stops.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(host.stops.size() == 1);
  CHECK(host.stops[0] == "isolated_budget: the time budget is spent");
  CHECK(handler.disabled().empty());
}
