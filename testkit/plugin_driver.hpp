// The shared fake host and plugin driver (trainhook_testkit, testkit/CMakeLists.txt):
// plugin libraries through the C ABI alone (dlopen, the entry symbol, a fake
// th_host, the vtable), so plugins are tested exactly as any host would load
// them, independently of the core. Used by the plugin unit tests, the stand-in
// trainers the integration scripts run (tests/*/*_driver.cpp) and the benchmarks.
#pragma once

#include <trainhook/abi.h>

#include <initializer_list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace testkit {

// <build>/lib/trainhook/plugins/<plugin_file_name(name)>; the build dir comes
// from TRAINHOOK_BUILD_DIR (set by CTest).
std::string plugin_path(const std::string& name);

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
  // Plays a host of ABI 1.<minor> (0 to 3): th_host.abi_minor and a table
  // cut to the end of that minor's last field. The fields past the cut stay
  // filled, so a plugin that reads one anyway is seen (end_requested_calls).
  void play_abi_minor(uint32_t minor);

  // 1.1 set_critical and 1.2 end_requested: what a plugin asked or polled.
  bool critical = false;
  int32_t end_now = 0;  // end_requested's answer
  int end_requested_calls = 0;
  // 1.3 stop_signal's answer.
  int32_t stop_sig = 0;

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

  th_host table_{};
  std::mutex mu_;
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
// the trainer's loader refuses it (core/src/plugin_host/plugin_loader.cpp).
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
  Run();
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
