// Header-only C++ convenience layer over abi.h for plugin authors.
//
// A plugin is a plain C++ class derived from trainhook::Callback that overrides
// the on_* methods it cares about, registered with TRAINHOOK_PLUGIN(...). This
// layer owns the C boundary: it catches every exception and turns it into a
// status plus message, computes the event mask from the methods you override
// (events you do not override are never dispatched to you), and implements the
// two-call save_state buffer protocol.
//
// Depends only on abi.h and the C++17 standard library.
//
//   class MyLogger final : public trainhook::Callback {
//    public:
//     explicit MyLogger(trainhook::Setup& setup) : host_(setup.host()) {}
//     void on_log(trainhook::Event& e) override { ... e.values() ... }
//    private:
//     trainhook::Host host_;
//   };
//   TRAINHOOK_PLUGIN("my_pack", "1.0.0",
//       trainhook::callback<MyLogger>("my_logger", "1.0.0", trainhook::Kind::integration,
//                                     "logs somewhere"))
//
// A library may also add CLI subcommands (`trainhook my-sync args...`): declare
// them with TRAINHOOK_COMMANDS(...) BEFORE TRAINHOOK_PLUGIN(...):
//
//   int my_sync(const trainhook::Host& host, const std::vector<std::string>& args) { ...; return 0; }
//   TRAINHOOK_COMMANDS(trainhook::command<&my_sync>("my-sync", "uploads offline runs"))
#ifndef TRAINHOOK_PLUGIN_HPP
#define TRAINHOOK_PLUGIN_HPP

#include <trainhook/abi.h>
#include <trainhook/plugin_config.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace trainhook {

enum class Kind : int32_t { callback = TH_KIND_CALLBACK, integration = TH_KIND_INTEGRATION };

enum class LogLevel : int32_t {
  trace = TH_LOG_TRACE,
  debug = TH_LOG_DEBUG,
  info = TH_LOG_INFO,
  warn = TH_LOG_WARN,
  error = TH_LOG_ERROR
};

// Thrown by a plugin to report a configuration problem (becomes TH_INVALID_ARGUMENT).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
inline void write_error(char* err, size_t err_size, const char* msg) noexcept {
  if (err == nullptr || err_size == 0) return;
  size_t n = std::strlen(msg);
  if (n >= err_size) n = err_size - 1;
  std::memcpy(err, msg, n);
  err[n] = '\0';
}
inline const char* or_empty(const char* s) noexcept { return s != nullptr ? s : ""; }
// Whether n is a value of the integer type T.
template <class T>
bool fits(int64_t n) noexcept {
  if constexpr (std::is_signed_v<T>)
    return n >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           n <= static_cast<int64_t>(std::numeric_limits<T>::max());
  else
    return n >= 0 && static_cast<uint64_t>(n) <= static_cast<uint64_t>(std::numeric_limits<T>::max());
}
}  // namespace detail

// ---- 1.1: tensor views (see abi.h "tensor views") ----------------------------

enum class Tensors : int32_t {
  parameters = TH_TENSORS_PARAMETERS,
  gradients = TH_TENSORS_GRADIENTS,
  buffers = TH_TENSORS_BUFFERS
};
enum class Access : int32_t { read = TH_ACCESS_READ, write = TH_ACCESS_WRITE };

// One borrowed tensor: valid until the event's call returns.
class TensorView {
 public:
  TensorView(const char* name, const DLTensor* t) noexcept : name_(name), t_(t) {}
  std::string_view name() const noexcept { return name_; }
  const DLTensor& dl() const noexcept { return *t_; }
  bool defined() const noexcept { return t_->data != nullptr; }  // a gradient may be absent
  int64_t numel() const noexcept {
    int64_t n = 1;
    for (int32_t i = 0; i < t_->ndim; ++i) n *= t_->shape[i];
    return n;
  }
  bool is_contiguous() const noexcept {
    if (t_->strides == nullptr) return true;
    int64_t expect = 1;
    for (int32_t i = t_->ndim - 1; i >= 0; --i) {
      if (t_->shape[i] != 1 && t_->strides[i] != expect) return false;
      expect *= t_->shape[i];
    }
    return true;
  }
  bool is_cpu_float32() const noexcept {
    return t_->device.device_type == kDLCPU && t_->dtype.code == kDLFloat && t_->dtype.bits == 32 &&
           t_->dtype.lanes == 1;
  }
  // The elements of a contiguous float32 CPU tensor; throws otherwise.
  float* floats() const {
    if (!defined() || !is_cpu_float32() || !is_contiguous())
      throw std::runtime_error("tensor '" + std::string(name_) +
                               "' is not a defined contiguous float32 CPU tensor");
    return reinterpret_cast<float*>(static_cast<char*>(t_->data) + t_->byte_offset);
  }

 private:
  const char* name_;
  const DLTensor* t_;
};

// The list a Host::tensors() call returned; iterate it with a range-for.
class TensorList {
 public:
  TensorList() = default;
  explicit TensorList(const th_tensor_list& l) noexcept : l_(l) {}
  uint32_t size() const noexcept { return l_.count; }
  TensorView operator[](uint32_t i) const noexcept { return TensorView(l_.names[i], &l_.tensors[i]); }
  struct iterator {
    const TensorList* list;
    uint32_t i;
    TensorView operator*() const noexcept { return (*list)[i]; }
    iterator& operator++() noexcept {
      ++i;
      return *this;
    }
    bool operator!=(const iterator& o) const noexcept { return i != o.i; }
  };
  iterator begin() const noexcept { return {this, 0}; }
  iterator end() const noexcept { return {this, size()}; }

 private:
  th_tensor_list l_{};
};

// Host services, borrowed from the trainer. Copyable view; valid for the
// lifetime of the callback instance that received it.
class Host {
 public:
  explicit Host(const th_host* h = nullptr) noexcept : h_(h) {}

  void log(LogLevel level, const std::string& message) const noexcept {
    if (h_ != nullptr && h_->log != nullptr) h_->log(h_->ctx, static_cast<int32_t>(level), message.c_str());
  }
  void debug(const std::string& m) const noexcept { log(LogLevel::debug, m); }
  void info(const std::string& m) const noexcept { log(LogLevel::info, m); }
  void warn(const std::string& m) const noexcept { log(LogLevel::warn, m); }
  void error(const std::string& m) const noexcept { log(LogLevel::error, m); }

  std::string output_dir() const { return call_str(h_ != nullptr ? h_->output_dir : nullptr); }
  std::string training_args_json() const {
    std::string s = call_str(h_ != nullptr ? h_->training_args_json : nullptr);
    return s.empty() ? "{}" : s;
  }
  // One training argument of the run, typed (HF's TrainingArguments name, as
  // in training_args.json): its value, or `fallback` when the trainer does not
  // give it or gives null. A value of another type throws ConfigError in the
  // words every plugin uses ("training argument 'logging_steps' is a string,
  // expected a number"). T: bool, std::string, double, or an integer type (a
  // whole number in its range). Reads training_args_json() at each call: read
  // what a plugin needs once, at create() or train begin.
  template <class T>
  T training_arg(const std::string& key, T fallback) const {
    const std::string args = training_args_json();
    char err[256] = {0};
    int found = 0;
    if constexpr (std::is_same_v<T, bool>) {
      int b = 0;
      found = th_args_bool(args.c_str(), key.c_str(), &b, err, sizeof err);
      if (found == 1) fallback = b != 0;
    } else if constexpr (std::is_same_v<T, std::string>) {
      size_t len = 0;
      found = th_args_string(args.c_str(), key.c_str(), nullptr, 0, &len, err, sizeof err);
      if (found == 1) {
        std::string text(len + 1, '\0');
        th_args_string(args.c_str(), key.c_str(), text.data(), text.size(), nullptr, err, sizeof err);
        text.resize(len);
        fallback = std::move(text);
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      double d = 0;
      found = th_args_number(args.c_str(), key.c_str(), &d, err, sizeof err);
      if (found == 1) fallback = static_cast<T>(d);
    } else {
      static_assert(std::is_integral_v<T>, "training_arg<T>: T is bool, std::string, a floating or an integer type");
      int64_t n = 0;
      found = th_args_int64(args.c_str(), key.c_str(), &n, err, sizeof err);
      if (found == 1) {
        if (!detail::fits<T>(n))
          throw ConfigError("training argument '" + key + "' is " + std::to_string(n) + ", out of range here");
        fallback = static_cast<T>(n);
      }
    }
    if (found < 0) throw ConfigError(err);
    return fallback;
  }
  // HF's total_train_batch_size: the samples one optimizer step takes over all
  // ranks, the state's train_batch_size (per device; else the argument
  // per_device_train_batch_size) x gradient_accumulation_steps x world_size,
  // each at least 1. The one count of samples per step every plugin reports.
  int64_t total_train_batch_size(const th_state& state) const {
    const auto at_least_one = [](int64_t v) { return v < 1 ? int64_t{1} : v; };
    const int64_t batch = state.train_batch_size > 0 ? state.train_batch_size
                                                     : training_arg<int64_t>("per_device_train_batch_size", 1);
    return at_least_one(batch) * at_least_one(training_arg<int64_t>("gradient_accumulation_steps", 1)) *
           at_least_one(state.world_size);
  }
  std::string trainer_state_json() const {
    if (!TH_HAS_FIELD(h_, th_host, trainer_state_json)) return "{}";
    std::string s = call_str(h_->trainer_state_json);
    return s.empty() ? "{}" : s;
  }
  std::string model_description() const {
    if (!TH_HAS_FIELD(h_, th_host, model_description)) return {};
    return call_str(h_->model_description);
  }
  std::string run_name() const {
    if (!TH_HAS_FIELD(h_, th_host, run_name)) return {};
    return call_str(h_->run_name);
  }
  // Thread-safe: may be called from a plugin's worker thread.
  void request_stop(const std::string& reason) const noexcept {
    if (h_ != nullptr && h_->request_stop != nullptr) h_->request_stop(h_->ctx, reason.c_str());
  }
  // Throws ConfigError with the host's message when refused.
  void set_resume_checkpoint(const std::string& path) const {
    if (!TH_HAS_FIELD(h_, th_host, set_resume_checkpoint) || h_->set_resume_checkpoint == nullptr)
      throw ConfigError("this trainer cannot set resume_from_checkpoint from a plugin");
    char err[1024] = {0};
    if (h_->set_resume_checkpoint(h_->ctx, path.c_str(), err, sizeof err) != TH_OK) throw ConfigError(err);
  }
  // The minor of the ABI the host speaks (0 without a host). A plugin built with
  // TRAINHOOK_ABI_MIN_MINOR below this SDK's minor may run on such a host: every
  // method here checks with TH_HAS_FIELD that the host's table has what it calls.
  uint32_t abi_minor() const noexcept { return h_ != nullptr ? h_->abi_minor : 0; }

  // ---- 1.1 (each throws std::invalid_argument with the host's message when refused) ----
  // True when the host offers the model services (a 1.1 host with a model).
  bool has_model_access() const noexcept {
    return TH_HAS_FIELD(h_, th_host, skip_optimizer_step) && h_->tensors != nullptr;
  }
  TensorList tensors(Tensors kind, Access access = Access::read) const {
    need(has_model_access());
    th_tensor_list out{};
    out.struct_size = TH_TENSOR_LIST_STRUCT_SIZE;
    char err[1024] = {0};
    check(
        h_->tensors(h_->ctx, static_cast<int32_t>(kind), static_cast<int32_t>(access), &out, err, sizeof err),
        err);
    return TensorList(out);
  }
  std::vector<double> learning_rates() const {
    need(has_model_access());
    std::vector<double> out(8);
    uint32_t count = 0;
    char err[1024] = {0};
    check(h_->learning_rates(h_->ctx, out.data(), static_cast<uint32_t>(out.size()), &count, err, sizeof err),
          err);
    if (count > out.size()) {
      out.resize(count);
      check(h_->learning_rates(h_->ctx, out.data(), count, &count, err, sizeof err), err);
    }
    out.resize(count);
    return out;
  }
  void set_lr_factor(double factor) const {
    need(has_model_access());
    char err[1024] = {0};
    check(h_->set_lr_factor(h_->ctx, factor, err, sizeof err), err);
  }
  double lr_factor() const {
    need(has_model_access());
    return h_->lr_factor(h_->ctx);
  }
  // Into the next log record built after the call: this step's when called up to
  // on_step_end, one record late from on_log / on_evaluate / on_save (abi.h).
  void add_metric(const std::string& name, double value) const {
    need(has_model_access());
    char err[1024] = {0};
    check(h_->add_metric(h_->ctx, name.c_str(), value, err, sizeof err), err);
  }
  void skip_optimizer_step() const {
    need(has_model_access());
    char err[1024] = {0};
    check(h_->skip_optimizer_step(h_->ctx, err, sizeof err), err);
  }
  // Declares this callback critical (call it in the constructor): its failure
  // stops the run whatever plugin_error_policy says. Throws on a 1.0 host.
  void set_critical() const {
    if (!TH_HAS_FIELD(h_, th_host, set_critical) || h_->set_critical == nullptr)
      throw std::invalid_argument(
          "this trainer cannot make a callback critical (needs a trainhook ABI 1.1 host)");
    h_->set_critical(h_->ctx);
  }
  // True once the run must end now (a signal during on_train_end, ABI 1.2): stop
  // waiting for deliveries, keep what is undelivered, return. False on older hosts.
  bool end_requested() const noexcept {
    return TH_HAS_FIELD(h_, th_host, end_requested) && h_->end_requested != nullptr &&
           h_->end_requested(h_->ctx) != 0;
  }
  // The signal (SIGINT, SIGTERM) that asked the run to stop and save, ABI 1.3;
  // 0 when none, or on older hosts.
  int stop_signal() const noexcept {
    return TH_HAS_FIELD(h_, th_host, stop_signal) && h_->stop_signal != nullptr ? h_->stop_signal(h_->ctx)
                                                                                : 0;
  }
  // True when this callback runs isolated, in a helper process of its own (ABI
  // 1.4): tensors() refuses there. Known from the constructor on, so a callback
  // that needs tensor views throws its own message there:
  //   if (host_.isolated()) throw trainhook::ConfigError("needs tensor views: run in process");
  // False in process, and on hosts older than 1.4 (which do not say; see
  // knows_isolation()).
  bool isolated() const noexcept {
    return knows_isolation() && h_->isolated != nullptr && h_->isolated(h_->ctx) != 0;
  }
  // True when the host says whether the callback runs isolated (a 1.4 host).
  bool knows_isolation() const noexcept { return TH_HAS_FIELD(h_, th_host, isolated); }
  // True when the run is profiled (--profile, ABI 1.5): time your own threads'
  // work with profile_span() then. False on older hosts.
  bool profiling() const noexcept {
    return TH_HAS_FIELD(h_, th_host, profile_span) && h_->profiling != nullptr && h_->profiling(h_->ctx) != 0;
  }
  // One span of this callback's own work on the calling thread (a worker's
  // batch), shown in the run's profile as "[Worker]<callback>.<what>" (ABI
  // 1.5). Does nothing on older hosts or when the run is not profiled. Any thread.
  void profile_span(const char* what, std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point end) const noexcept {
    if (!TH_HAS_FIELD(h_, th_host, profile_span) || h_->profile_span == nullptr) return;
    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    h_->profile_span(h_->ctx, what, duration_cast<nanoseconds>(start.time_since_epoch()).count(),
                     duration_cast<nanoseconds>(end.time_since_epoch()).count());
  }

  // Of the events this callback handles, the ones it only observes (ABI 1.6,
  // abi.h's set_observe_only): no control flag, no tensor, no add_metric,
  // set_lr_factor, skip_optimizer_step or set_resume_checkpoint there. Isolated,
  // they reach it without a round trip. A class whose set is fixed declares
  // `static constexpr uint64_t observed_events`, which the SDK passes here
  // before constructing it; a constructor that knows better from its options
  // (an event that does nothing unless a setting asks for it) calls this, and
  // the last call wins. Does nothing on older hosts.
  void set_observe_only(uint64_t events) const noexcept {
    if (TH_HAS_FIELD(h_, th_host, set_observe_only) && h_->set_observe_only != nullptr)
      h_->set_observe_only(h_->ctx, events);
  }

  // Of the events this callback waits at, the ones where it does not steer
  // (as above) and does only its own work, which no other callback of the
  // event needs done first (ABI 1.8, abi.h's set_side_by_side): flushing its
  // own file, linking a checkpoint it uploads later. Isolated, the trainer
  // goes on with the next callbacks while it works and waits for it at the
  // event's end. `static constexpr uint64_t side_by_side_events` in the class
  // declares a fixed set, as observed_events; the last call wins. Does
  // nothing on older hosts.
  void set_side_by_side(uint64_t events) const noexcept {
    if (TH_HAS_FIELD(h_, th_host, set_side_by_side) && h_->set_side_by_side != nullptr)
      h_->set_side_by_side(h_->ctx, events);
  }

  const th_host* raw() const noexcept { return h_; }

 private:
  static void need(bool ok) {
    if (!ok)
      throw std::invalid_argument("this trainer offers no model access (needs a trainhook ABI 1.1 host)");
  }
  static void check(th_status st, const char* err) {
    if (st != TH_OK) throw std::invalid_argument(err[0] != '\0' ? err : "refused by the host");
  }
  std::string call_str(const char* (*fn)(void*)) const {
    if (fn == nullptr) return {};
    return detail::or_empty(fn(h_->ctx));
  }
  const th_host* h_;
};

// What a callback receives when it is created.
class Setup {
 public:
  Setup(const th_host* host, const char* config_json) : host_(host), config_(detail::or_empty(config_json)) {
    if (config_.empty()) config_ = "{}";
  }
  const Host& host() const noexcept { return host_; }
  // This callback's configuration section, a JSON object ("{}" when none).
  const std::string& config_json() const noexcept { return config_; }

 private:
  Host host_;
  std::string config_;
};

// Read-only view of a th_values record (logs or metrics). Borrowed for one call.
class Values {
 public:
  explicit Values(const th_values* v) noexcept : v_(v) {}
  uint32_t size() const noexcept { return v_ != nullptr ? v_->count : 0; }
  std::string_view key(uint32_t i) const noexcept { return v_->keys[i]; }
  double value(uint32_t i) const noexcept { return v_->values[i]; }
  uint32_t string_size() const noexcept {
    return TH_HAS_FIELD(v_, th_values, string_values) ? v_->string_count : 0;
  }
  std::string_view string_key(uint32_t i) const noexcept { return v_->string_keys[i]; }
  std::string_view string_value(uint32_t i) const noexcept { return v_->string_values[i]; }
  std::optional<double> find(std::string_view k) const noexcept {
    for (uint32_t i = 0; i < size(); ++i)
      if (key(i) == k) return value(i);
    return std::nullopt;
  }
  bool empty() const noexcept { return size() == 0 && string_size() == 0; }

 private:
  const th_values* v_;
};

// One event as the C++ layer presents it. Borrowed for one call.
class Event {
 public:
  explicit Event(const th_event_args* a) noexcept : a_(a) {}
  int32_t id() const noexcept { return a_->event; }
  const th_state& state() const noexcept { return *a_->state; }
  th_control& control() const noexcept { return *a_->control; }
  Values values() const noexcept { return Values(a_->values); }  // logs or metrics
  std::string_view checkpoint_dir() const noexcept { return detail::or_empty(a_->checkpoint_dir); }
  int64_t batch_index() const noexcept { return a_->batch_index; }
  int64_t batch_count() const noexcept { return a_->batch_count; }
  bool is_predict() const noexcept { return a_->prediction_kind == 1; }
  bool is_world_process_zero() const noexcept { return a_->state->is_world_process_zero != 0; }
  // 1.1: this step's values at PRE_OPTIMIZER_STEP, OPTIMIZER_STEP and STEP_END; else nullptr.
  const th_step_values* step() const noexcept {
    return TH_HAS_FIELD(a_, th_event_args, step) ? a_->step : nullptr;
  }
  // 1.3: at EXCEPTION, why the run is ending; else nullptr.
  const th_failure* failure() const noexcept {
    return TH_HAS_FIELD(a_, th_event_args, failure) ? a_->failure : nullptr;
  }
  // 1.7: when the trainer emitted the event (steady_clock: CLOCK_MONOTONIC, the
  // same clock in every process). Time the training loop with this, not with
  // now(): an observe-only event reaches an isolated callback later. From an
  // older host, now().
  std::chrono::steady_clock::time_point time() const noexcept {
    if (!TH_HAS_FIELD(a_, th_event_args, time_ns)) return std::chrono::steady_clock::now();
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(a_->time_ns));
  }
  const th_event_args* raw() const noexcept { return a_; }

 private:
  const th_event_args* a_;
};

// "error", "out_of_memory", "plugin", "signal" or "non_finite" (th_failure.kind);
// an unknown kind from a newer host reads as "error".
inline const char* failure_kind_name(int32_t kind) noexcept {
  switch (kind) {
    case TH_FAILURE_OUT_OF_MEMORY:
      return "out_of_memory";
    case TH_FAILURE_PLUGIN:
      return "plugin";
    case TH_FAILURE_SIGNAL:
      return "signal";
    case TH_FAILURE_NON_FINITE:
      return "non_finite";
    default:
      return "error";
  }
}

// Base class of every C++ plugin callback. Override what you need; the rest is
// never dispatched to you. Throwing from any method is allowed: the layer turns
// it into an error status for the host.
class Callback {
 public:
  virtual ~Callback() = default;
  // One virtual per event of abi.h's TH_EVENT_LIST: on_init_end(Event&), ...
#define TRAINHOOK_DETAIL_VIRTUAL(name, value, method) \
  virtual void method(Event&) {}
  TH_EVENT_LIST(TRAINHOOK_DETAIL_VIRTUAL)
#undef TRAINHOOK_DETAIL_VIRTUAL
  // Stateful callbacks: return a JSON object text to store in checkpoints
  // (stateful_callbacks in trainer_state.json); empty = nothing to store.
  virtual std::string save_state() { return {}; }
  virtual void load_state(const std::string& /*state_json*/) {}

  void dispatch(Event& e) {
    switch (e.id()) {
#define TRAINHOOK_DETAIL_CASE(name, value, method) \
  case TH_EVENT_##name:                            \
    method(e);                                     \
    break;
      TH_EVENT_LIST(TRAINHOOK_DETAIL_CASE)
#undef TRAINHOOK_DETAIL_CASE
      default:
        break;  // an event from a newer host: ignore
    }
  }

 private:
  std::string saved_;  // keeps save_state()'s text between the two buffer calls
  template <class T>
  friend struct Adapter;
};

namespace detail {

// Which events does T override? Taking &T::on_x names Callback::on_x when T
// does not override it, which the type of the member pointer tells apart.
template <class T>
constexpr uint64_t event_mask() {
  uint64_t m = 0;
#define TRAINHOOK_DETAIL_BIT(name, value, method) \
  if (!std::is_same_v<decltype(&T::method), decltype(&Callback::method)>) m |= TH_EVENT_BIT(TH_EVENT_##name);
  TH_EVENT_LIST(TRAINHOOK_DETAIL_BIT)
#undef TRAINHOOK_DETAIL_BIT
  return m;
}

// T::observed_events, when T (or a base such as support::Integration) declares
// it: TH_EVENT_BIT()s of the events it only observes (Host::set_observe_only).
template <class T, class = void>
struct observed_events_of {
  static constexpr uint64_t value = 0;
};
template <class T>
struct observed_events_of<T, std::void_t<decltype(T::observed_events)>> {
  static constexpr uint64_t value = static_cast<uint64_t>(T::observed_events);
};

// Whether T overrides save_state / load_state (assumed so when the member is
// not accessible here, e.g. a private override).
template <class T, class = void>
struct overrides_save_state : std::true_type {};
template <class T>
struct overrides_save_state<T, std::void_t<decltype(&T::save_state)>>
    : std::bool_constant<!std::is_same_v<decltype(&T::save_state), decltype(&Callback::save_state)>> {};
template <class T, class = void>
struct overrides_load_state : std::true_type {};
template <class T>
struct overrides_load_state<T, std::void_t<decltype(&T::load_state)>>
    : std::bool_constant<!std::is_same_v<decltype(&T::load_state), decltype(&Callback::load_state)>> {};

// T::side_by_side_events, likewise (Host::set_side_by_side).
template <class T, class = void>
struct side_by_side_events_of {
  static constexpr uint64_t value = 0;
};
template <class T>
struct side_by_side_events_of<T, std::void_t<decltype(T::side_by_side_events)>> {
  static constexpr uint64_t value = static_cast<uint64_t>(T::side_by_side_events);
};

template <class F>
th_status guarded(char* err, size_t err_size, F&& f) noexcept {
  try {
    f();
    return TH_OK;
  } catch (const ConfigError& e) {
    write_error(err, err_size, e.what());
    return TH_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    write_error(err, err_size, e.what());
    return TH_ERROR;
  } catch (...) {
    write_error(err, err_size, "unknown exception");
    return TH_ERROR;
  }
}

}  // namespace detail

template <class T>
struct Adapter {
  static_assert(std::is_base_of_v<Callback, T>, "a plugin callback derives from trainhook::Callback");
  static_assert(std::is_constructible_v<T, Setup&>,
                "a plugin callback has a constructor T(trainhook::Setup&)");

  static th_status create(const th_host* host, const char* cfg, void** out, char* err, size_t n) noexcept {
    return detail::guarded(err, n, [&] {
      Setup setup(host, cfg);
      // Only events T handles: a declaration never widens its mask. Before
      // the constructor, so that its own call (from its options) wins.
      constexpr uint64_t observed = detail::observed_events_of<T>::value & detail::event_mask<T>();
      if constexpr (observed != 0) setup.host().set_observe_only(observed);
      constexpr uint64_t side_by_side = detail::side_by_side_events_of<T>::value & detail::event_mask<T>();
      if constexpr (side_by_side != 0) setup.host().set_side_by_side(side_by_side);
      *out = static_cast<Callback*>(new T(setup));
    });
  }
  static th_status on_event(void* self, const th_event_args* a, char* err, size_t n) noexcept {
    return detail::guarded(err, n, [&] {
      Event e(a);
      static_cast<Callback*>(self)->dispatch(e);
    });
  }
  static th_status save_state(void* self, char* buf, size_t size, size_t* needed, char* err,
                              size_t n) noexcept {
    auto* cb = static_cast<Callback*>(self);
    th_status st = detail::guarded(err, n, [&] {
      if (buf == nullptr || cb->saved_.empty() || size <= cb->saved_.size()) cb->saved_ = cb->save_state();
    });
    if (st != TH_OK) return st;
    if (needed != nullptr) *needed = cb->saved_.size() + 1;
    if (buf == nullptr || size < cb->saved_.size() + 1) return TH_BUFFER_TOO_SMALL;
    std::memcpy(buf, cb->saved_.c_str(), cb->saved_.size() + 1);
    cb->saved_.clear();
    return TH_OK;
  }
  static th_status load_state(void* self, const char* json, char* err, size_t n) noexcept {
    return detail::guarded(err, n, [&] { static_cast<Callback*>(self)->load_state(detail::or_empty(json)); });
  }
  static void destroy(void* self) noexcept { delete static_cast<Callback*>(self); }

  static const th_callback_vtable* vtable() noexcept {
    // A class that keeps no state offers no save_state / load_state: the
    // trainer then asks it nothing at a save (isolated, each ask is a round
    // trip that waits for the helper's queued events).
    static const th_callback_vtable vt = {TH_CALLBACK_VTABLE_STRUCT_SIZE, &on_event,
                                          detail::overrides_save_state<T>::value ? &save_state : nullptr,
                                          detail::overrides_load_state<T>::value ? &load_state : nullptr,
                                          &destroy};
    return &vt;
  }
};

// Describes one callback of a library; use inside TRAINHOOK_PLUGIN(...).
template <class T>
th_callback_info callback(const char* name, const char* version, Kind kind, const char* description) {
  th_callback_info info{};
  info.struct_size = TH_CALLBACK_INFO_STRUCT_SIZE;
  info.name = name;
  info.version = version;
  info.kind = static_cast<int32_t>(kind);
  info.description = description;
  info.event_mask = detail::event_mask<T>();
  info.create = &Adapter<T>::create;
  info.vtable = Adapter<T>::vtable();
  return info;
}

// A CLI subcommand's implementation: returns the process exit code; may throw
// (the message becomes the command's error).
using CommandFn = int (*)(const Host& host, const std::vector<std::string>& args);

// Runs a plugin CLI command body at the C boundary: converts argv, catches every
// exception into (status, err) as the SDK's adapters do, stores the exit code.
// For a library that wants its own th_command_info.run function; most use
// trainhook::command<&fn>(...) inside TRAINHOOK_COMMANDS instead.
inline th_status run_command(CommandFn fn, const th_host* host, int32_t argc, const char* const* argv,
                             int32_t* exit_code, char* err, size_t err_size) noexcept {
  return detail::guarded(err, err_size, [&] {
    std::vector<std::string> args;
    for (int32_t i = 0; i < argc; ++i) args.emplace_back(detail::or_empty(argv[i]));
    const int code = fn(Host(host), args);
    if (exit_code != nullptr) *exit_code = code;
  });
}

template <CommandFn Fn>
struct CommandAdapter {
  static th_status run(const th_host* host, int32_t argc, const char* const* argv, int32_t* exit_code,
                       char* err, size_t n) noexcept {
    return run_command(Fn, host, argc, argv, exit_code, err, n);
  }
};

// Describes one CLI subcommand; use inside TRAINHOOK_COMMANDS(...).
template <CommandFn Fn>
th_command_info command(const char* name, const char* description) {
  th_command_info info{};
  info.struct_size = TH_COMMAND_INFO_STRUCT_SIZE;
  info.name = name;
  info.description = description;
  info.run = &CommandAdapter<Fn>::run;
  return info;
}

namespace detail {
inline th_status negotiate(const th_host_info* host, const th_plugin_info* info, const th_plugin_info** out,
                           char* err, size_t err_size) noexcept {
  if (host == nullptr || host->abi_major != TRAINHOOK_ABI_VERSION_MAJOR) {
    write_error(err, err_size, "plugin needs trainhook ABI major version 1");
    return TH_ABI_MISMATCH;
  }
  *out = info;
  return TH_OK;
}
// The pointer table th_plugin_info.callbacks/.commands points at (see abi.h).
template <class T, size_t N>
std::array<const T*, N> pointers(const T (&items)[N]) noexcept {
  std::array<const T*, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = &items[i];
  return out;
}
}  // namespace detail

}  // namespace trainhook

// The commands of a library without TRAINHOOK_COMMANDS: none. TRAINHOOK_COMMANDS
// declares a better match for the call in TRAINHOOK_PLUGIN (int beats long).
inline std::pair<const th_command_info* const*, uint32_t> trainhook_plugin_commands_(long) {
  return {nullptr, 0};
}

// Declares the library's CLI subcommands: trainhook::command<&fn>(name, description)...
#define TRAINHOOK_COMMANDS(...)                                                                     \
  static std::pair<const th_command_info* const*, uint32_t> trainhook_plugin_commands_(int) {       \
    static const th_command_info trainhook_commands_[] = {__VA_ARGS__};                             \
    static const auto trainhook_command_ptrs_ = trainhook::detail::pointers(trainhook_commands_);   \
    return {trainhook_command_ptrs_.data(), static_cast<uint32_t>(trainhook_command_ptrs_.size())}; \
  }

// Defines the library's entry point (TRAINHOOK_ENTRY_NAME of abi.h). Arguments:
// library name, library version, then one trainhook::callback<T>(...) per
// callback the library exports.
#define TRAINHOOK_PLUGIN(lib_name, lib_version, ...)                                                       \
  extern "C" TRAINHOOK_EXPORT th_status TRAINHOOK_ENTRY_NAME(                                              \
      const th_host_info* host, const th_plugin_info** out, char* err, size_t err_size) {                  \
    static const th_callback_info trainhook_callbacks_[] = {__VA_ARGS__};                                  \
    static const auto trainhook_callback_ptrs_ = trainhook::detail::pointers(trainhook_callbacks_);        \
    static const std::pair<const th_command_info* const*, uint32_t> trainhook_cmds_ =                      \
        trainhook_plugin_commands_(0);                                                                     \
    static const th_plugin_info trainhook_info_ = {TH_PLUGIN_INFO_STRUCT_SIZE,                             \
                                                   TRAINHOOK_ABI_VERSION_MAJOR,                            \
                                                   TRAINHOOK_ABI_MIN_MINOR,                                \
                                                   lib_name,                                               \
                                                   lib_version,                                            \
                                                   static_cast<uint32_t>(trainhook_callback_ptrs_.size()), \
                                                   trainhook_callback_ptrs_.data(),                        \
                                                   trainhook_cmds_.second,                                 \
                                                   trainhook_cmds_.first};                                 \
    return trainhook::detail::negotiate(host, &trainhook_info_, out, err, err_size);                       \
  }

#endif  // TRAINHOOK_PLUGIN_HPP
