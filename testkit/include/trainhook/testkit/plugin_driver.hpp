// The fake host and plugin driver (Trainhook::testkit, installed with the SDK;
// find_package(Trainhook 0.5 COMPONENTS sdk testkit)): plugin libraries
// through the C ABI alone (dlopen, the entry symbol, a fake th_host, the
// vtable), so a plugin is tested exactly as any host would load it, with no
// trainer and no LibTorch. Our own plugin tests, the stand-in trainers of the
// integration scripts and the benchmarks use it too (in tree, testkit/).
//
//   testkit::FakeHost host;                 // a 1.<this SDK's minor> trainer
//   host.play_abi_minor(1);                 // ... or a 1.1 one (a smaller table)
//   testkit::Library lib("build/libtrainhook_acme.so", 1);
//   testkit::Instance cb(lib.callback("acme"), host, R"({"file": "x.json"})");
//   testkit::Run run;                       // single process, step 0
//   run.state.global_step = 1;
//   run.set_step_values(0.5, 1.0, 1e-3);    // what PRE_OPTIMIZER_STEP..STEP_END carry
//   cb.fire(TH_EVENT_STEP_END, run);
//   CHECK(host.last_metric("acme_norm") == 1.0);          // th_host.add_metric
//   CHECK(run.control.should_training_stop == 1);         // a control flag it set
//
// What it does not do: enforce the trainer's per-event rules (which events may
// read or write tensors, reset control flags between events); the trainer
// does, and `trainhook plugin check` / a short `trainhook train` run show them.
#pragma once

#include <trainhook/abi.h>

#include <initializer_list>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace testkit {

// The th_host size a host of ABI 1.<minor> fills (0 to this SDK's minor): the
// end of that minor's last field. Throws std::invalid_argument above it.
uint32_t host_table_size(uint32_t minor);

// A th_host whose services are plain members. Logs, stop requests and the
// resume checkpoint a plugin asks for are recorded; with echo_prefix set, log
// lines and stop requests are also printed to stderr (for drivers run by
// scripts) as "[<prefix>] <level>: <message>" and "[<prefix>] stop requested: <reason>".
class FakeHost {
 public:
  std::string args_json = "{}";
  std::string output_dir = ".";
  std::string state_json = "{}";
  std::string model_description;
  std::string run_name = "test-run";
  std::string echo_prefix;
  int32_t echo_min_level = TH_LOG_TRACE;  // quieter echo (benchmarks: TH_LOG_WARN); all are recorded
  // When set, set_resume_checkpoint refuses with this message (a host that
  // cannot resume); else it records the path in resume_checkpoint.
  std::string resume_error;
  std::string resume_checkpoint;
  std::vector<std::pair<int32_t, std::string>> logs;
  std::vector<std::string> stop_reasons;

  FakeHost();
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const th_host* table() const noexcept { return &table_; }
  // Declares a smaller table, as a host built against an older abi.h would:
  // the plugin must not read the fields past `struct_size`.
  void set_struct_size(uint32_t struct_size) noexcept { table_.struct_size = struct_size; }
  // Plays a host of ABI 1.<minor> (0 to this SDK's minor): th_host.abi_minor
  // and a table cut to the end of that minor's last field. The fields past the
  // cut stay filled, so a plugin that reads one anyway is seen
  // (end_requested_calls). Pair it with Library(path, minor), which tells the
  // entry point the same minor.
  void play_abi_minor(uint32_t minor);

  // 1.1 model services. tensors() hands out the views the test put here (it
  // owns their data; kind TH_TENSORS_PARAMETERS, _GRADIENTS or _BUFFERS);
  // add_metric, set_lr_factor and skip_optimizer_step are recorded. With
  // model_error set, each of them refuses with that message instead.
  std::vector<std::pair<std::string, DLTensor>> parameters, gradients, buffers;
  std::vector<double> learning_rates{1e-3};
  double lr_factor = 1.0;
  std::vector<std::pair<std::string, double>> metrics;  // every add_metric, in order
  int skipped_steps = 0;                                // skip_optimizer_step calls
  std::string model_error;
  // The value of the last add_metric(name), if any.
  std::optional<double> last_metric(const std::string& name);

  // 1.1 set_critical and 1.2 end_requested: what a plugin asked or polled.
  bool critical = false;
  int32_t end_now = 0;  // end_requested's answer
  int end_requested_calls = 0;
  // 1.3 stop_signal's answer.
  int32_t stop_sig = 0;
  // 1.4 th_host.isolated's answer. True plays the trainer's helper process
  // (plugin_isolation): tensors() refuses there, with the trainer's message.
  bool isolated = false;
  // 1.5 th_host.profiling's answer, and every profile_span the plugin sent
  // (any thread), in order.
  bool profiling = false;
  struct Span {
    std::string what;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  std::vector<Span> spans();
  // 1.6 th_host.set_observe_only: the events the plugin declared it only
  // observes (0 until it calls it).
  uint64_t observe_only = 0;
  // 1.8 th_host.set_side_by_side: the waited events the plugin declared side
  // by side (0 until it calls it).
  uint64_t side_by_side = 0;

  // Log messages at `min_level` or above containing `needle`.
  size_t count_logs(int32_t min_level, const std::string& needle);
  // A log message at exactly `level` containing `needle`.
  bool has(int32_t level, const std::string& needle);
  // A log message at any level containing `needle`.
  bool logged(const std::string& needle) { return count_logs(TH_LOG_TRACE, needle) > 0; }
  // Every log line as "<level> <message>\n", for failure messages.
  std::string all_logs();

 private:
  static void log_fn(void* ctx, int32_t level, const char* message);
  static void stop_fn(void* ctx, const char* reason);
  static th_status resume_fn(void* ctx, const char* path, char* err, size_t err_size);
  static int32_t end_requested_fn(void* ctx);
  static void profile_span_fn(void* ctx, const char* what, int64_t start_ns, int64_t end_ns);
  static th_status tensors_fn(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                              size_t err_size);
  static th_status learning_rates_fn(void* ctx, double* out, uint32_t capacity, uint32_t* count, char* err,
                                     size_t err_size);
  static th_status set_lr_factor_fn(void* ctx, double factor, char* err, size_t err_size);
  static th_status add_metric_fn(void* ctx, const char* name, double value, char* err, size_t err_size);
  static th_status skip_fn(void* ctx, char* err, size_t err_size);

  th_host table_{};
  std::mutex mu_;
  std::vector<Span> spans_;                // guarded by mu_
  std::vector<const char*> tensor_names_;  // the last tensors() answer's names
  std::vector<DLTensor> tensor_views_;     // and views
};

// Thrown when a call returns a non-OK status; carries the status and message.
struct CallError : std::runtime_error {
  th_status status;
  CallError(th_status s, const std::string& m) : std::runtime_error(m), status(s) {}
};

// A loaded library; stays loaded until destroyed (destroy instances first).
// Throws std::runtime_error naming the file when it cannot be loaded, has no
// entry symbol or its entry fails. The entry is told the host speaks ABI
// 1.<host_abi_minor>, and a library that answers a newer minor is refused as
// the trainer's loader refuses it (core/src/plugin_host/registry/plugin_loader.cpp).
class Library {
 public:
  explicit Library(const std::string& path, uint32_t host_abi_minor = TRAINHOOK_ABI_VERSION_MINOR);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const th_plugin_info& info() const noexcept { return *info_; }
  // Throws std::runtime_error when the library exports no such callback/command.
  const th_callback_info& callback(const std::string& name) const;
  const th_command_info& command(const std::string& name) const;
  // Runs a command as `trainhook <name> <args...>` would; returns its exit
  // code, throws CallError on a non-OK status.
  int run_command(const std::string& name, const std::vector<std::string>& args, const FakeHost& host) const;

 private:
  std::string path_;
  void* handle_ = nullptr;
  const th_plugin_info* info_ = nullptr;
};

// Numeric logs/metrics plus optional strings, as a th_values view.
class Values {
 public:
  Values() = default;
  Values(std::initializer_list<std::pair<std::string, double>> numbers) {
    for (const auto& [k, v] : numbers) add(k, v);
  }
  explicit Values(const std::vector<std::pair<std::string, double>>& numbers,
                  const std::vector<std::pair<std::string, std::string>>& strings = {}) {
    for (const auto& [k, v] : numbers) add(k, v);
    for (const auto& [k, v] : strings) add_string(k, v);
  }
  Values& add(const std::string& key, double v) {
    keys_.push_back(key);
    values_.push_back(v);
    return *this;
  }
  Values& add_string(const std::string& key, const std::string& v) {
    skeys_.push_back(key);
    svalues_.push_back(v);
    return *this;
  }
  // Valid until this object changes or is destroyed.
  const th_values* view();

 private:
  std::vector<std::string> keys_, skeys_, svalues_;
  std::vector<double> values_;
  std::vector<const char*> kp_, skp_, svp_;
  th_values v_{};
};

// Everything an event needs besides its id: a single-process run.
struct Run {
  th_state state{};
  th_control control{};
  // 1.1: th_event_args.step at PRE_OPTIMIZER_STEP, OPTIMIZER_STEP and STEP_END
  // once set_step_values() was called (NULL before, as from a 1.0 host).
  th_step_values step{};
  bool has_step_values = false;
  // 1.7: th_event_args.time_ns of the events fired; 0 = the clock at each one
  // (a test that checks step timings sets the times it wants).
  int64_t time_ns = 0;
  Run();
  void set_step_values(double loss, double grad_norm, double learning_rate) {
    step.loss = loss;
    step.grad_norm = grad_norm;
    step.learning_rate = learning_rate;
    has_step_values = true;
  }
};

// One callback instance; destroyed with this object.
class Instance {
 public:
  // Throws CallError when create fails.
  Instance(const th_callback_info& info, FakeHost& host, const std::string& config_json = "{}");
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Fires an event if the callback's mask asks for it (as a host does);
  // throws CallError on a non-OK status.
  void fire(int32_t event, Run& run, const th_values* values = nullptr, int64_t batch_index = -1,
            int64_t batch_count = -1, int32_t prediction_kind = 0, const char* checkpoint_dir = nullptr);
  // EXCEPTION (ABI 1.3) with `failure` as the reason, if the mask asks for it.
  void fire_exception(Run& run, const th_failure& failure);
  // on_save for a checkpoint folder the caller wrote.
  void save(Run& run, const std::string& checkpoint_dir) {
    fire(TH_EVENT_SAVE, run, nullptr, -1, -1, 0, checkpoint_dir.c_str());
  }
  // The two-call save_state protocol: ask for the size, then fetch.
  std::string save_state();
  void load_state(const std::string& json);

 private:
  const th_callback_info& info_;
  void* self_ = nullptr;
};

// The error creating a callback with `config_json` fails with (status TH_OK
// and an empty message when creation succeeds).
CallError create_error(const th_callback_info& info, FakeHost& host, const std::string& config_json);

}  // namespace testkit
