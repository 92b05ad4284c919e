// Callbacks in the process. There is ONE C++ callback model for users:
// trainhook::Callback of sdk/include/trainhook/plugin.hpp (typed on_log(Event&)
// etc.), the same class a plugin author derives from. Code that embeds the
// trainer hands one over as a NamedCallback (see make_callback); the core wraps
// it in an in-process adapter that builds the same th_event_args a plugin gets.
//
// detail::InternalCallback is what the handler calls: the core's own
// DefaultFlowCallback, the adapter of a plugin's C vtable and the adapter of a
// NamedCallback implement it. It is internal to the core, not for embedders.
#pragma once

#include <trainhook/abi.h>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/plugin.hpp>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

namespace trainhook {

// Event ids are the ABI's TH_EVENT_* values.
using EventId = int32_t;

// What an event carries besides state and control; all borrowed for one call.
struct EventPayload {
  const th_values* values = nullptr;     // logs (LOG) or metrics (EVALUATE/PREDICT)
  const char* checkpoint_dir = nullptr;  // SAVE
  int64_t batch_index = -1;              // PREDICTION_STEP
  int64_t batch_count = -1;              // PREDICTION_STEP
  int32_t prediction_kind = 0;           // PREDICTION_STEP: 0 evaluate, 1 predict
  const th_step_values* step = nullptr;  // PRE_OPTIMIZER_STEP, OPTIMIZER_STEP, STEP_END (ABI 1.1)
  const th_failure* failure = nullptr;   // EXCEPTION (ABI 1.3)
};

// A user's C++ callback with its name (the key of its state in
// stateful_callbacks, and how errors and `disabled()` name it). event_mask
// says which events reach it; make_callback computes it from the overrides.
struct NamedCallback {
  std::string name;
  std::unique_ptr<Callback> callback;
  uint64_t event_mask = TH_EVENT_MASK_ALL;
};

// NamedCallback{name, std::make_unique<T>(args...), events T overrides}.
template <class T, class... Args>
NamedCallback make_callback(std::string name, Args&&... args) {
  static_assert(std::is_base_of_v<Callback, T>, "a callback derives from trainhook::Callback");
  return NamedCallback{std::move(name), std::make_unique<T>(std::forward<Args>(args)...),
                       detail::event_mask<T>()};
}

namespace detail {

// Internal to the core (see the top of this file).
class InternalCallback {
 public:
  virtual ~InternalCallback() = default;
  // Unique name; for plugins, the callback name from its th_callback_info.
  virtual std::string name() const = 0;
  // Bit set of TH_EVENT_BIT()s this callback wants; others are not dispatched.
  virtual uint64_t event_mask() const { return TH_EVENT_MASK_ALL; }
  // A critical callback's failure stops the run whatever plugin_error_policy says.
  virtual bool critical() const { return false; }
  // May throw; the handler applies the plugin error policy.
  virtual void on_event(EventId event, const th_event_args& args) = 0;
  // Stateful callbacks: state to store under stateful_callbacks[name()]; nullopt = stateless.
  virtual std::optional<nlohmann::json> save_state() { return std::nullopt; }
  virtual void load_state(const nlohmann::json& /*state*/) {}
  // The embedder's object behind an in-process adapter (nullptr for the core's
  // and plugins' callbacks), so pop_callback/remove_callback find it by instance.
  virtual const Callback* user_callback() const noexcept { return nullptr; }
  // Runs in a helper process: a call is a round trip (a profile shows it apart).
  virtual bool isolated() const noexcept { return false; }
  // The events at which this callback may answer later: the handler starts
  // its call with begin_event, calls the next callbacks meanwhile (with the
  // flags as they were before it), and collects the answer with end_event, in
  // order, before the event ends. A flag it sets there is not taken
  // (end_event reports it). Both may throw, as on_event.
  virtual uint64_t deferred_events() const noexcept { return 0; }
  virtual void begin_event(EventId event, const th_event_args& args) { on_event(event, args); }
  virtual void end_event(EventId /*event*/) {}
};

// The in-process adapter of a NamedCallback: dispatches th_event_args through
// trainhook::Event exactly as the SDK's plugin adapter does; save_state's text
// must be a JSON object (empty = stateless).
std::unique_ptr<InternalCallback> adapt(NamedCallback cb);

}  // namespace detail
}  // namespace trainhook
