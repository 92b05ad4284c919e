// The fake host and plugin driver (trainhook/testkit/plugin_driver.hpp):
// C ABI and the C++ standard library only, so it installs with the SDK.
#include <trainhook/testkit/plugin_driver.hpp>

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace testkit {
namespace {

const char* level_name(int32_t level) {
  static const char* names[] = {"trace", "debug", "info", "warn", "error"};
  return level >= TH_LOG_TRACE && level <= TH_LOG_ERROR ? names[level - TH_LOG_TRACE] : "?";
}

void write_err(char* err, size_t err_size, const std::string& message) {
  if (err != nullptr && err_size > 0) std::snprintf(err, err_size, "%s", message.c_str());
}

int64_t event_time(const Run& run) {
  if (run.time_ns != 0) return run.time_ns;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

FakeHost::FakeHost() {
  table_.struct_size = TH_HOST_STRUCT_SIZE;
  table_.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  table_.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  table_.ctx = this;
  table_.log = &FakeHost::log_fn;
  table_.output_dir = [](void* c) { return static_cast<FakeHost*>(c)->output_dir.c_str(); };
  table_.training_args_json = [](void* c) { return static_cast<FakeHost*>(c)->args_json.c_str(); };
  table_.request_stop = &FakeHost::stop_fn;
  table_.trainer_state_json = [](void* c) { return static_cast<FakeHost*>(c)->state_json.c_str(); };
  table_.model_description = [](void* c) { return static_cast<FakeHost*>(c)->model_description.c_str(); };
  table_.set_resume_checkpoint = &FakeHost::resume_fn;
  table_.run_name = [](void* c) { return static_cast<FakeHost*>(c)->run_name.c_str(); };
  table_.tensors = &FakeHost::tensors_fn;
  table_.learning_rates = &FakeHost::learning_rates_fn;
  table_.set_lr_factor = &FakeHost::set_lr_factor_fn;
  table_.lr_factor = [](void* c) {
    auto* h = static_cast<FakeHost*>(c);
    std::lock_guard<std::mutex> lock(h->mu_);
    return h->lr_factor;
  };
  table_.add_metric = &FakeHost::add_metric_fn;
  table_.skip_optimizer_step = &FakeHost::skip_fn;
  table_.set_critical = [](void* c) { static_cast<FakeHost*>(c)->critical = true; };
  table_.end_requested = &FakeHost::end_requested_fn;
  table_.stop_signal = [](void* c) { return static_cast<FakeHost*>(c)->stop_sig; };
  table_.isolated = [](void* c) { return static_cast<FakeHost*>(c)->isolated ? 1 : 0; };
  table_.profiling = [](void* c) { return static_cast<FakeHost*>(c)->profiling ? 1 : 0; };
  table_.profile_span = &FakeHost::profile_span_fn;
  table_.set_observe_only = [](void* c, uint64_t events) {
    static_cast<FakeHost*>(c)->observe_only = events;
  };
  table_.set_side_by_side = [](void* c, uint64_t events) {
    static_cast<FakeHost*>(c)->side_by_side = events;
  };
}

uint32_t host_table_size(uint32_t minor) {
  if (minor > TRAINHOOK_ABI_VERSION_MINOR)
    throw std::invalid_argument("ABI 1." + std::to_string(minor) + ": this testkit speaks ABI 1." +
                                std::to_string(TRAINHOOK_ABI_VERSION_MINOR) + " at most");
  // The last th_host field of each minor (abi.h).
  static const uint32_t sizes[] = {
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, run_name)),          // 1.0
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, set_critical)),      // 1.1
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, end_requested)),     // 1.2
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, stop_signal)),       // 1.3
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, isolated)),          // 1.4
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, profile_span)),      // 1.5
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, set_observe_only)),  // 1.6
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, set_observe_only)),  // 1.7 (th_event_args.time_ns only)
      static_cast<uint32_t>(TH_STRUCT_SIZE(th_host, set_side_by_side)),  // 1.8
  };
  static_assert(sizeof sizes / sizeof sizes[0] == TRAINHOOK_ABI_VERSION_MINOR + 1,
                "a new ABI minor adds its last th_host field here");
  return sizes[minor];
}

void FakeHost::play_abi_minor(uint32_t minor) {
  // A table of that size is what a host built against that minor's header fills.
  const uint32_t size = host_table_size(minor);
  table_.abi_minor = minor;
  table_.struct_size = size;
}

void FakeHost::profile_span_fn(void* ctx, const char* what, int64_t start_ns, int64_t end_ns) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  h->spans_.push_back(Span{what != nullptr ? what : "", start_ns, end_ns});
}

std::vector<FakeHost::Span> FakeHost::spans() {
  std::lock_guard<std::mutex> lock(mu_);
  return spans_;
}

std::optional<double> FakeHost::last_metric(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = metrics.rbegin(); it != metrics.rend(); ++it)
    if (it->first == name) return it->second;
  return std::nullopt;
}

th_status FakeHost::tensors_fn(void* ctx, int32_t kind, int32_t access, th_tensor_list* out, char* err,
                               size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  std::string why = h->model_error;
  if (why.empty() && h->isolated)
    why =
        "runs in its own process (plugin_isolation): the model's tensors are not shared with it; run it "
        "in process to read or write them";
  if (why.empty() && (out == nullptr || !TH_HAS_FIELD(out, th_tensor_list, tensors)))
    why = "tensors: `out` is NULL or its struct_size is not set to TH_TENSOR_LIST_STRUCT_SIZE";
  if (why.empty() && access != TH_ACCESS_READ && access != TH_ACCESS_WRITE)
    why = "tensors: unknown access " + std::to_string(access);
  const std::vector<std::pair<std::string, DLTensor>>* list = kind == TH_TENSORS_PARAMETERS  ? &h->parameters
                                                              : kind == TH_TENSORS_GRADIENTS ? &h->gradients
                                                              : kind == TH_TENSORS_BUFFERS   ? &h->buffers
                                                                                             : nullptr;
  if (why.empty() && list == nullptr) why = "tensors: unknown kind " + std::to_string(kind);
  if (!why.empty()) {
    write_err(err, err_size, why);
    return TH_INVALID_ARGUMENT;
  }
  h->tensor_names_.clear();
  h->tensor_views_.clear();
  for (const auto& [name, view] : *list) {
    h->tensor_names_.push_back(name.c_str());
    h->tensor_views_.push_back(view);
  }
  out->count = static_cast<uint32_t>(list->size());
  out->names = h->tensor_names_.data();
  out->tensors = h->tensor_views_.data();
  return TH_OK;
}

th_status FakeHost::learning_rates_fn(void* ctx, double* out, uint32_t capacity, uint32_t* count, char* err,
                                      size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->model_error.empty() || count == nullptr) {
    write_err(err, err_size, h->model_error.empty() ? "learning_rates: `count` is NULL" : h->model_error);
    return TH_INVALID_ARGUMENT;
  }
  *count = static_cast<uint32_t>(h->learning_rates.size());
  for (uint32_t i = 0; out != nullptr && i < capacity && i < *count; ++i) out[i] = h->learning_rates[i];
  return TH_OK;
}

th_status FakeHost::set_lr_factor_fn(void* ctx, double factor, char* err, size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->model_error.empty() || !(factor > 0) || !std::isfinite(factor)) {
    write_err(err, err_size,
              h->model_error.empty() ? "set_lr_factor: the factor must be finite and > 0" : h->model_error);
    return TH_INVALID_ARGUMENT;
  }
  h->lr_factor = factor;
  return TH_OK;
}

th_status FakeHost::add_metric_fn(void* ctx, const char* name, double value, char* err, size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  std::string why = h->model_error;
  if (why.empty() && (name == nullptr || *name == '\0')) why = "add_metric: the metric name is empty";
  if (why.empty() && !std::isfinite(value))
    why = std::string("add_metric: ") + name + " is not finite (only finite values reach the logs)";
  if (!why.empty()) {
    write_err(err, err_size, why);
    return TH_INVALID_ARGUMENT;
  }
  h->metrics.emplace_back(name, value);
  return TH_OK;
}

th_status FakeHost::skip_fn(void* ctx, char* err, size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->model_error.empty()) {
    write_err(err, err_size, h->model_error);
    return TH_INVALID_ARGUMENT;
  }
  ++h->skipped_steps;
  return TH_OK;
}

int32_t FakeHost::end_requested_fn(void* ctx) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  ++h->end_requested_calls;
  return h->end_now;
}

void FakeHost::log_fn(void* ctx, int32_t level, const char* message) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->echo_prefix.empty() && level >= h->echo_min_level)
    std::fprintf(stderr, "[%s] %s: %s\n", h->echo_prefix.c_str(), level_name(level), message);
  h->logs.emplace_back(level, message);
}

void FakeHost::stop_fn(void* ctx, const char* reason) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->echo_prefix.empty())
    std::fprintf(stderr, "[%s] stop requested: %s\n", h->echo_prefix.c_str(), reason);
  h->stop_reasons.emplace_back(reason);
}

th_status FakeHost::resume_fn(void* ctx, const char* path, char* err, size_t err_size) {
  auto* h = static_cast<FakeHost*>(ctx);
  std::lock_guard<std::mutex> lock(h->mu_);
  if (!h->resume_error.empty()) {
    write_err(err, err_size, h->resume_error);
    return TH_INVALID_ARGUMENT;
  }
  h->resume_checkpoint = path;
  return TH_OK;
}

size_t FakeHost::count_logs(int32_t min_level, const std::string& needle) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const auto& [level, message] : logs)
    if (level >= min_level && message.find(needle) != std::string::npos) ++n;
  return n;
}

bool FakeHost::has(int32_t level, const std::string& needle) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [l, message] : logs)
    if (l == level && message.find(needle) != std::string::npos) return true;
  return false;
}

std::string FakeHost::all_logs() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string s;
  for (const auto& [level, message] : logs) s += std::to_string(level) + " " + message + "\n";
  return s;
}

Library::Library(const std::string& path, uint32_t host_abi_minor) : path_(path) {
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) throw std::runtime_error("cannot load " + path + ": " + ::dlerror());
  auto entry = reinterpret_cast<th_plugin_entry_fn>(::dlsym(handle_, TRAINHOOK_ENTRY_SYMBOL));
  if (entry == nullptr) {
    ::dlclose(handle_);
    throw std::runtime_error(path + " has no entry symbol " TRAINHOOK_ENTRY_SYMBOL);
  }
  const th_host_info host{TH_HOST_INFO_STRUCT_SIZE, TRAINHOOK_ABI_VERSION_MAJOR, host_abi_minor, "testkit"};
  char err[1024] = {0};
  if (entry(&host, &info_, err, sizeof err) != TH_OK || info_ == nullptr) {
    ::dlclose(handle_);
    throw std::runtime_error(path + ": entry " TRAINHOOK_ENTRY_SYMBOL " failed: " + err);
  }
  if (info_->abi_minor > host_abi_minor) {
    const std::string plugin_abi = std::to_string(info_->abi_major) + "." + std::to_string(info_->abi_minor);
    ::dlclose(handle_);
    throw std::runtime_error(path + ": the plugin was built for ABI " + plugin_abi +
                             ", newer than this host's ABI " + std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) +
                             "." + std::to_string(host_abi_minor));
  }
}

Library::~Library() { ::dlclose(handle_); }

const th_callback_info& Library::callback(const std::string& name) const {
  for (uint32_t i = 0; i < info_->callback_count; ++i)
    if (name == info_->callbacks[i]->name) return *info_->callbacks[i];
  throw std::runtime_error(path_ + " exports no callback " + name);
}

const th_command_info& Library::command(const std::string& name) const {
  const uint32_t n =
      TH_HAS_FIELD(info_, th_plugin_info, commands) && info_->commands != nullptr ? info_->command_count : 0;
  for (uint32_t i = 0; i < n; ++i)
    if (name == info_->commands[i]->name) return *info_->commands[i];
  throw std::runtime_error(path_ + " exports no command " + name);
}

int Library::run_command(const std::string& name, const std::vector<std::string>& args,
                         const FakeHost& host) const {
  const th_command_info& cmd = command(name);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  int32_t code = 0;
  char err[2048] = {0};
  const th_status st =
      cmd.run(host.table(), static_cast<int32_t>(args.size()), argv.data(), &code, err, sizeof err);
  if (st != TH_OK) throw CallError(st, err);
  return code;
}

const th_values* Values::view() {
  kp_.clear();
  skp_.clear();
  svp_.clear();
  for (const auto& k : keys_) kp_.push_back(k.c_str());
  for (const auto& k : skeys_) skp_.push_back(k.c_str());
  for (const auto& v : svalues_) svp_.push_back(v.c_str());
  v_ = th_values{TH_VALUES_STRUCT_SIZE,
                 static_cast<uint32_t>(keys_.size()),
                 kp_.data(),
                 values_.data(),
                 static_cast<uint32_t>(skeys_.size()),
                 skp_.data(),
                 svp_.data()};
  return &v_;
}

Run::Run() {
  state.struct_size = TH_STATE_STRUCT_SIZE;
  state.is_local_process_zero = 1;
  state.is_world_process_zero = 1;
  state.world_size = 1;
  control.struct_size = TH_CONTROL_STRUCT_SIZE;
  step.struct_size = TH_STEP_VALUES_STRUCT_SIZE;
  step.grad_norm = std::nan("");
}

Instance::Instance(const th_callback_info& info, FakeHost& host, const std::string& config_json)
    : info_(info) {
  char err[1024] = {0};
  const th_status st = info.create(host.table(), config_json.c_str(), &self_, err, sizeof err);
  if (st != TH_OK) throw CallError(st, err);
}

Instance::~Instance() {
  if (self_ != nullptr) info_.vtable->destroy(self_);
}

void Instance::fire(int32_t event, Run& run, const th_values* values, int64_t batch_index,
                    int64_t batch_count, int32_t prediction_kind, const char* checkpoint_dir) {
  if ((info_.event_mask & TH_EVENT_BIT(event)) == 0) return;
  th_event_args a{};
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  a.event = event;
  a.state = &run.state;
  a.control = &run.control;
  a.values = values;
  a.checkpoint_dir = checkpoint_dir;
  a.batch_index = batch_index;
  a.batch_count = batch_count;
  a.prediction_kind = prediction_kind;
  if (run.has_step_values && (event == TH_EVENT_PRE_OPTIMIZER_STEP || event == TH_EVENT_OPTIMIZER_STEP ||
                              event == TH_EVENT_STEP_END))
    a.step = &run.step;
  a.time_ns = event_time(run);
  char err[1024] = {0};
  const th_status st = info_.vtable->on_event(self_, &a, err, sizeof err);
  if (st != TH_OK) throw CallError(st, err);
}

void Instance::fire_exception(Run& run, const th_failure& failure) {
  if ((info_.event_mask & TH_EVENT_BIT(TH_EVENT_EXCEPTION)) == 0) return;
  th_event_args a{};
  a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  a.event = TH_EVENT_EXCEPTION;
  a.time_ns = event_time(run);
  a.state = &run.state;
  a.control = &run.control;
  a.batch_index = -1;
  a.batch_count = -1;
  a.failure = &failure;
  char err[1024] = {0};
  const th_status st = info_.vtable->on_event(self_, &a, err, sizeof err);
  if (st != TH_OK) throw CallError(st, err);
}

std::string Instance::save_state() {
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

void Instance::load_state(const std::string& json) {
  char err[1024] = {0};
  const th_status st = info_.vtable->load_state(self_, json.c_str(), err, sizeof err);
  if (st != TH_OK) throw CallError(st, err);
}

CallError create_error(const th_callback_info& info, FakeHost& host, const std::string& config_json) {
  try {
    Instance created(info, host, config_json);
  } catch (const CallError& e) {
    return e;
  }
  return CallError(TH_OK, "");
}

}  // namespace testkit
