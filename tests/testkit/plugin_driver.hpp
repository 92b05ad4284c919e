// The plugin tests' shared driver: plugin libraries through the C ABI alone
// (dlopen, the entry symbol, a fake th_host, the vtable), so plugins are tested
// exactly as any host would load them, independently of the core. Used by the
// early_stopping, progress, flyte and tensorboard tests and drivers.
#pragma once

#include <trainhook/abi.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace testkit {

// <build>/lib/trainhook/plugins/libtrainhook_<name>.so; the build dir comes from
// TRAINHOOK_BUILD_DIR (set by CTest).
inline std::string plugin_path(const std::string& library) {
  const char* build = std::getenv("TRAINHOOK_BUILD_DIR");
  if (build == nullptr)
    throw std::runtime_error("TRAINHOOK_BUILD_DIR is not set (run the test through ctest)");
  return std::string(build) + "/lib/trainhook/plugins/libtrainhook_" + library + ".so";
}

// A th_host whose services are plain members. Logs, stop requests and the
// resume checkpoint a plugin asks for are recorded (logs also echoed to stderr
// with echo_prefix when that is set, for drivers run by scripts).
class FakeHost {
 public:
  std::string args_json = "{}";
  std::string output_dir = ".";
  std::string state_json = "{}";
  std::string model_description;
  std::string run_name = "test-run";
  std::string echo_prefix;
  std::string resume_checkpoint;  // what set_resume_checkpoint received
  std::vector<std::pair<int32_t, std::string>> logs;
  std::vector<std::string> stop_reasons;

  FakeHost() {
    table_.struct_size = TH_HOST_STRUCT_SIZE;
    table_.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
    table_.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
    table_.ctx = this;
    table_.log = [](void* c, int32_t level, const char* m) {
      auto* h = static_cast<FakeHost*>(c);
      std::lock_guard<std::mutex> lock(h->mu_);
      if (!h->echo_prefix.empty()) std::fprintf(stderr, "[%s %d] %s\n", h->echo_prefix.c_str(), level, m);
      h->logs.emplace_back(level, m);
    };
    table_.output_dir = [](void* c) { return static_cast<FakeHost*>(c)->output_dir.c_str(); };
    table_.training_args_json = [](void* c) { return static_cast<FakeHost*>(c)->args_json.c_str(); };
    table_.request_stop = [](void* c, const char* r) {
      auto* h = static_cast<FakeHost*>(c);
      std::lock_guard<std::mutex> lock(h->mu_);
      h->stop_reasons.emplace_back(r);
    };
    table_.trainer_state_json = [](void* c) { return static_cast<FakeHost*>(c)->state_json.c_str(); };
    table_.model_description = [](void* c) { return static_cast<FakeHost*>(c)->model_description.c_str(); };
    table_.set_resume_checkpoint = [](void* c, const char* path, char*, size_t) -> th_status {
      static_cast<FakeHost*>(c)->resume_checkpoint = path;
      return TH_OK;
    };
    table_.run_name = [](void* c) { return static_cast<FakeHost*>(c)->run_name.c_str(); };
  }
  FakeHost(const FakeHost&) = delete;
  FakeHost& operator=(const FakeHost&) = delete;

  const th_host* table() const noexcept { return &table_; }
  // Log messages at `level` or above containing `needle`.
  size_t count_logs(int32_t min_level, const std::string& needle) {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (const auto& [level, message] : logs)
      if (level >= min_level && message.find(needle) != std::string::npos) ++n;
    return n;
  }
  // A log message at exactly `level` containing `needle`.
  bool has(int32_t level, const std::string& needle) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [l, message] : logs)
      if (l == level && message.find(needle) != std::string::npos) return true;
    return false;
  }
  // A log message at any level containing `needle`.
  bool logged(const std::string& needle) { return count_logs(TH_LOG_TRACE, needle) > 0; }
  // Every log line as "<level> <message>\n", for failure messages.
  std::string all_logs() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string s;
    for (const auto& [level, message] : logs) s += std::to_string(level) + " " + message + "\n";
    return s;
  }

 private:
  th_host table_{};
  std::mutex mu_;
};

// A loaded library; stays loaded until destroyed (destroy instances first).
class Library {
 public:
  explicit Library(const std::string& path) {
    handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) throw std::runtime_error("dlopen " + path + ": " + ::dlerror());
    auto entry = reinterpret_cast<th_plugin_entry_fn>(::dlsym(handle_, TRAINHOOK_ENTRY_SYMBOL));
    if (entry == nullptr) throw std::runtime_error(path + " has no " + TRAINHOOK_ENTRY_SYMBOL);
    th_host_info host{TH_HOST_INFO_STRUCT_SIZE, TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR, "test"};
    char err[512] = {0};
    if (entry(&host, &info_, err, sizeof err) != TH_OK) throw std::runtime_error(path + ": " + err);
  }
  ~Library() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const th_plugin_info& info() const noexcept { return *info_; }
  const th_callback_info& callback(const std::string& name) const {
    for (uint32_t i = 0; i < info_->callback_count; ++i)
      if (name == info_->callbacks[i]->name) return *info_->callbacks[i];
    throw std::runtime_error("no callback " + name);
  }

 private:
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
  const th_values* view() {
    kp_.clear();
    skp_.clear();
    svp_.clear();
    for (const auto& k : keys_) kp_.push_back(k.c_str());
    for (const auto& k : skeys_) skp_.push_back(k.c_str());
    for (const auto& v : svalues_) svp_.push_back(v.c_str());
    v_ = th_values{TH_VALUES_STRUCT_SIZE, static_cast<uint32_t>(keys_.size()),  kp_.data(),
                   values_.data(),    static_cast<uint32_t>(skeys_.size()), skp_.data(),
                   svp_.data()};
    return &v_;
  }

 private:
  std::vector<std::string> keys_, skeys_, svalues_;
  std::vector<double> values_;
  std::vector<const char*> kp_, skp_, svp_;
  th_values v_{};
};

// Everything an event needs besides its id.
struct Run {
  th_state state{};
  th_control control{};
  Run() {
    state.struct_size = TH_STATE_STRUCT_SIZE;
    state.is_local_process_zero = 1;
    state.is_world_process_zero = 1;
    state.world_size = 1;
    control.struct_size = TH_CONTROL_STRUCT_SIZE;
  }
};

// Thrown when a call returns a non-OK status; carries the status and message.
struct CallError : std::runtime_error {
  th_status status;
  CallError(th_status s, const std::string& m) : std::runtime_error(m), status(s) {}
};

// One callback instance.
class Instance {
 public:
  Instance(const th_callback_info& info, FakeHost& host, const std::string& config_json = "{}")
      : info_(info) {
    char err[1024] = {0};
    const th_status st = info.create(host.table(), config_json.c_str(), &self_, err, sizeof err);
    if (st != TH_OK) throw CallError(st, err);
  }
  ~Instance() {
    if (self_ != nullptr) info_.vtable->destroy(self_);
  }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // Fires an event if the callback's mask asks for it (as a host does).
  void fire(int32_t event, Run& run, const th_values* values = nullptr, int64_t batch_index = -1,
            int64_t batch_count = -1, int32_t prediction_kind = 0, const char* checkpoint_dir = nullptr) {
    if ((info_.event_mask & TH_EVENT_BIT(event)) == 0) return;
    th_event_args a{};
    a.checkpoint_dir = checkpoint_dir;
    a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
    a.event = event;
    a.state = &run.state;
    a.control = &run.control;
    a.values = values;
    a.batch_index = batch_index;
    a.batch_count = batch_count;
    a.prediction_kind = prediction_kind;
    char err[1024] = {0};
    const th_status st = info_.vtable->on_event(self_, &a, err, sizeof err);
    if (st != TH_OK) throw CallError(st, err);
  }
  // on_save for a checkpoint folder the test wrote.
  void save(Run& run, const std::string& checkpoint_dir) {
    fire(TH_EVENT_SAVE, run, nullptr, -1, -1, 0, checkpoint_dir.c_str());
  }
  // The two-call save_state protocol: ask for the size, then fetch.
  std::string save_state() {
    if (info_.vtable->save_state == nullptr) return {};
    char err[1024] = {0};
    size_t needed = 0;
    char probe[1];
    th_status st = info_.vtable->save_state(self_, probe, 0, &needed, err, sizeof err);
    if (st == TH_OK) return {};
    if (st != TH_BUFFER_TOO_SMALL) throw CallError(st, err);
    std::string buf(needed, '\0');
    st = info_.vtable->save_state(self_, buf.data(), buf.size(), &needed, err, sizeof err);
    if (st != TH_OK) throw CallError(st, err);
    buf.resize(buf.size() - 1);  // the NUL
    return buf;
  }
  void load_state(const std::string& json) {
    char err[1024] = {0};
    const th_status st = info_.vtable->load_state(self_, json.c_str(), err, sizeof err);
    if (st != TH_OK) throw CallError(st, err);
  }

 private:
  const th_callback_info& info_;
  void* self_ = nullptr;
};

// The error creating a callback with `config_json` fails with (status TH_OK
// and an empty message when creation succeeds).
inline CallError create_error(const th_callback_info& info, FakeHost& host, const std::string& config_json) {
  try {
    Instance created(info, host, config_json);
  } catch (const CallError& e) {
    return e;
  }
  return CallError(TH_OK, "");
}

}  // namespace testkit
