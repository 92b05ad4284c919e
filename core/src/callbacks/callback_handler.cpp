// HF CallbackHandler semantics over detail::InternalCallback. The hot path (fire) copies
// state/control into the C structs once per event and then only makes one
// virtual call per interested callback; no allocation unless a callback fails.
#include <trainhook/callbacks/callback_handler.hpp>

#include <trainhook/common/monotonic_ns.hpp>
#include <trainhook/common/profiler.hpp>

#include <trainhook/callbacks/hf_callback_names.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>

#include <spdlog/spdlog.h>

#include <exception>

namespace trainhook {

const char* event_name(EventId event) noexcept {
  switch (event) {
#define TRAINHOOK_EVENT_NAME_CASE(name, value, method) \
  case TH_EVENT_##name:                                \
    return #method;
    TH_EVENT_LIST(TRAINHOOK_EVENT_NAME_CASE)
#undef TRAINHOOK_EVENT_NAME_CASE
    default:
      return "on_unknown_event";
  }
}

CallbackHandler::CallbackHandler(PluginErrorPolicy policy) : policy_(policy) {}

// Callbacks are destroyed in reverse order of addition, before any library
// reference they hold is released (see plugin_registry.hpp).
CallbackHandler::~CallbackHandler() {
  while (!callbacks_.empty()) callbacks_.pop_back();
}

void CallbackHandler::add(NamedCallback cb) { add(detail::adapt(std::move(cb))); }

void CallbackHandler::add(std::unique_ptr<detail::InternalCallback> cb, Listing listing) {
  if (!cb) throw std::invalid_argument("CallbackHandler::add: null callback");
  if (find(cb->name()) != nullptr)
    throw std::invalid_argument("callback '" + cb->name() + "' is already in the callback list");
  masks_.push_back(cb->event_mask());
  critical_.push_back(cb->critical() ? 1 : 0);
  enabled_.push_back(1);
  internal_.push_back(listing == Listing::internal ? 1 : 0);
  deferred_.push_back(cb->deferred_events());
  callbacks_.push_back(std::move(cb));
}

detail::InternalCallback* CallbackHandler::find(const std::string& name) const noexcept {
  for (const auto& cb : callbacks_)
    if (cb->name() == name) return cb.get();
  return nullptr;
}

std::vector<CallbackHandler::Disabled> CallbackHandler::disabled() const {
  std::lock_guard<std::mutex> lock(disabled_mu_);
  return disabled_;
}

void CallbackHandler::request_stop(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(disabled_mu_);
    if (stop_requested_.load(std::memory_order_relaxed)) return;  // the first reason is kept
    stop_reason_ = reason;
    stop_requested_.store(true, std::memory_order_relaxed);
  }
  spdlog::info("stop requested: {}", reason.empty() ? "(no reason given)" : reason);
}

std::string CallbackHandler::stop_reason() const {
  std::lock_guard<std::mutex> lock(disabled_mu_);
  return stop_reason_;
}

void CallbackHandler::failed(size_t index, const char* where, const std::string& message, bool at_exception) {
  const std::string& name = callbacks_[index]->name();
  {
    std::lock_guard<std::mutex> lock(disabled_mu_);
    disabled_.push_back({name, where, message});
  }
  enabled_[index] = 0;
  // The run is already ending by an error: that error stands, and every other
  // callback still hears on_exception.
  if (at_exception) {
    spdlog::error("callback '{}' failed in {}: {} (the run's own error stands)", name, where, message);
    return;
  }
  if (critical_[index] != 0) {
    spdlog::error("callback '{}' failed in {}: {} (a critical callback: stopping the run)", name, where,
                  message);
    throw CallbackError("critical callback '" + name + "' failed in " + where + ": " + message);
  }
  if (policy_ == PluginErrorPolicy::fail) {
    spdlog::error("callback '{}' failed in {}: {} (plugin_error_policy=fail: stopping the run)", name, where,
                  message);
    throw CallbackError("callback '" + name + "' failed in " + where + ": " + message);
  }
  spdlog::error("callback '{}' failed in {}: {} (disabled for the rest of the run)", name, where, message);
}

void CallbackHandler::fire(EventId event, const TrainerState& state, TrainerControl& control,
                           const EventPayload& payload) {
  // HF's CallbackHandler resets these before the callbacks of the event run.
  switch (event) {
    case TH_EVENT_TRAIN_BEGIN:
      control.should_training_stop = false;
      break;
    case TH_EVENT_EPOCH_BEGIN:
      control.should_epoch_stop = false;
      break;
    case TH_EVENT_STEP_BEGIN:
      control.should_log = false;
      control.should_evaluate = false;
      control.should_save = false;
      break;
    case TH_EVENT_EVALUATE:
      control.should_evaluate = false;
      break;
    case TH_EVENT_SAVE:
      control.should_save = false;
      break;
    case TH_EVENT_LOG:
      control.should_log = false;
      break;
    default:
      break;
  }
  // A stop request is sticky: it survives on_train_begin's reset.
  if (stop_requested_.load(std::memory_order_relaxed)) control.should_training_stop = true;

  // Not zeroed first: to_c and the aggregate below set every field (see state.cpp).
  th_state c_state;
  to_c(state, c_state);
  th_control c_control;
  to_c(control, c_control);
  const th_event_args args{TH_EVENT_ARGS_STRUCT_SIZE,
                           event,
                           &c_state,
                           &c_control,
                           payload.values,
                           payload.checkpoint_dir,
                           payload.batch_index,
                           payload.batch_count,
                           payload.prediction_kind,
                           payload.step,
                           payload.failure,
                           monotonic_ns()};
  // Host services ask which event is running (ABI 1.1 views are valid per event).
  struct CurrentEvent {
    EventId& slot;
    EventId saved;
    ~CurrentEvent() { slot = saved; }
  } current{current_event_, current_event_};
  current_event_ = event;

  // Calls answered later (InternalCallback::deferred_events): the callbacks
  // after them are called meanwhile, and each answer is collected, in order,
  // before the event ends. Also when a failure ends the event early: a
  // callback must not be left with an answer nobody took.
  struct Deferred {
    CallbackHandler& handler;
    EventId event;
    std::vector<size_t> begun;
    size_t ended = 0;
    ~Deferred() {
      for (; ended < begun.size(); ++ended) {
        try {
          handler.callbacks_[begun[ended]]->end_event(event);
        } catch (...) {  // the failure that ended the event stands
        }
      }
    }
  } deferred{*this, event, {}};
  const uint64_t bit = (event >= 0 && event < 64) ? TH_EVENT_BIT(event) : 0;
  struct NotRunning {
    std::atomic<int64_t>& running;
    ~NotRunning() { running.store(-1, std::memory_order_relaxed); }
  };
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    if (enabled_[i] == 0 || (masks_[i] & bit) == 0) continue;
    const th_control before = c_control;
    running_.store(static_cast<int64_t>(i), std::memory_order_relaxed);
    calls_started_.store(calls_started_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    const NotRunning not_running{running_};
    try {
      if ((deferred_[i] & bit) != 0) {
        callbacks_[i]->begin_event(event, args);
        deferred.begun.push_back(i);
        continue;
      }
      call(i, event, args);
      continue;
    } catch (const std::exception& e) {
      c_control = before;  // a failing callback's partial flag changes are dropped
      c_control.struct_size = TH_CONTROL_STRUCT_SIZE;
      failed(i, event_name(event), e.what(), event == TH_EVENT_EXCEPTION);
    } catch (...) {
      c_control = before;
      c_control.struct_size = TH_CONTROL_STRUCT_SIZE;
      failed(i, event_name(event), "unknown exception", event == TH_EVENT_EXCEPTION);
    }
  }
  for (; deferred.ended < deferred.begun.size();) {
    const size_t i = deferred.begun[deferred.ended++];
    running_.store(static_cast<int64_t>(i), std::memory_order_relaxed);
    const NotRunning not_running{running_};
    try {
      end_call(i, event);
    } catch (const std::exception& e) {
      failed(i, event_name(event), e.what(), event == TH_EVENT_EXCEPTION);
    } catch (...) {
      failed(i, event_name(event), "unknown exception", event == TH_EVENT_EXCEPTION);
    }
  }
  if (stop_requested_.load(std::memory_order_relaxed)) c_control.should_training_stop = 1;
  from_c(c_control, control);
}

void CallbackHandler::set_profiler(Profiler* profiler) {
  profiler_ = profiler;
  profile_actions_.clear();
}

void CallbackHandler::call(size_t index, EventId event, const th_event_args& args) {
  const ProfileScope timed(profiler_, profile_action(index, event));
  callbacks_[index]->on_event(event, args);
}

void CallbackHandler::end_call(size_t index, EventId event) {
  const ProfileScope timed(profiler_, profile_action(index, event));
  callbacks_[index]->end_event(event);
}

int CallbackHandler::profile_action(size_t index, EventId event) {
  if (profiler_ == nullptr) return -1;
  const detail::InternalCallback& cb = *callbacks_[index];
  std::vector<int>& ids = profile_actions_[&cb];
  const auto slot = static_cast<size_t>(event < 0 ? 0 : event);
  if (ids.size() <= slot) ids.resize(slot + 1, -1);
  if (ids[slot] < 0)
    ids[slot] = profiler_->action(std::string(cb.isolated() ? "[Isolated]" : "[Callback]") + cb.name() + "." +
                                  event_name(event));
  return ids[slot];
}

std::string CallbackHandler::running_callback() const {
  const int64_t i = running_.load(std::memory_order_relaxed);
  return i >= 0 && static_cast<size_t>(i) < callbacks_.size() ? callbacks_[static_cast<size_t>(i)]->name()
                                                              : std::string();
}

void CallbackHandler::save_states(TrainerState& state, const TrainerControl& control) {
  // Rebuilt from scratch at each save: one entry per callback name (HF's
  // growing-list bug, PR 33875, cannot happen).
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    if (enabled_[i] == 0) continue;
    try {
      std::optional<nlohmann::json> st = callbacks_[i]->save_state();
      if (!st) continue;
      if (!st->is_object())
        throw std::runtime_error("saved state must be a JSON object, got " + std::string(st->type_name()));
      out[stateful_callback_key(callbacks_[i]->name())] = std::move(*st);
    } catch (const std::exception& e) {
      failed(i, "save_state", e.what());
    } catch (...) {
      failed(i, "save_state", "unknown exception");
    }
  }
  out["TrainerControl"] = control_to_stateful(control);
  state.stateful_callbacks = std::move(out);
}

void CallbackHandler::load_states(const TrainerState& state) {
  const nlohmann::json& saved = state.stateful_callbacks;
  if (!saved.is_object()) return;
  std::vector<std::string> unknown;
  for (auto it = saved.begin(); it != saved.end(); ++it) {
    bool known = it.key() == "TrainerControl" || find(it.key()) != nullptr;
    for (size_t i = 0; i < callbacks_.size() && !known; ++i)
      known = stateful_callback_key(callbacks_[i]->name()) == it.key();
    if (!known) unknown.push_back(it.key());
  }
  for (const auto& name : unknown)
    spdlog::warn("checkpoint has state for callback '{}', which is not in this run; ignoring it", name);
  for (size_t i = 0; i < callbacks_.size(); ++i) {
    if (enabled_[i] == 0) continue;
    // HF's class name first; our callback name in checkpoints written before it.
    auto it = saved.find(stateful_callback_key(callbacks_[i]->name()));
    if (it == saved.end()) it = saved.find(callbacks_[i]->name());
    if (it == saved.end()) continue;
    try {
      callbacks_[i]->load_state(*it);
    } catch (const std::exception& e) {
      failed(i, "load_state", e.what());
    } catch (...) {
      failed(i, "load_state", "unknown exception");
    }
  }
}

void CallbackHandler::load_states(const TrainerState& state, TrainerControl& control) {
  load_states(state);
  auto it = state.stateful_callbacks.find("TrainerControl");
  if (it == state.stateful_callbacks.end() || !it->is_object()) return;
  auto args = it->find("args");
  if (args == it->end() || !args->is_object()) return;
  auto flag = [&](const char* key, bool& field) {
    auto f = args->find(key);
    if (f != args->end() && f->is_boolean()) field = f->get<bool>();
  };
  flag("should_training_stop", control.should_training_stop);
  flag("should_epoch_stop", control.should_epoch_stop);
  flag("should_save", control.should_save);
  flag("should_evaluate", control.should_evaluate);
  flag("should_log", control.should_log);
}

}  // namespace trainhook
