// Calls callbacks in order at each event, as HF's CallbackHandler does: resets
// the TrainerControl flags for the event, lets each callback see what the
// previous one set, and hands the merged result back to the trainer.
//
// Ownership: the handler owns its callbacks (unique_ptr). Plugin callbacks keep
// their library loaded (see plugin_registry.hpp), so destroying the handler
// destroys callbacks before libraries are unloaded.
#pragma once

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/common/errors.hpp>

#include <atomic>
#include <trainhook/args/strategies.hpp>

#include <memory>
#include <mutex>
#include <unordered_map>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook {

class Profiler;

const char* event_name(EventId event) noexcept;  // "on_log", ...

class CallbackHandler {
 public:
  explicit CallbackHandler(PluginErrorPolicy policy = PluginErrorPolicy::disable);
  ~CallbackHandler();
  CallbackHandler(const CallbackHandler&) = delete;
  CallbackHandler& operator=(const CallbackHandler&) = delete;

  // Whether a callback is one of the Trainer's listed callbacks (HF's
  // callback list: callback_names(), pop_callback) or the trainer's own
  // machinery (e.g. the learning-rate factor's state keeper), which is called
  // like any other but neither listed nor taken out by name or instance.
  enum class Listing { listed, internal };

  // A user's trainhook::Callback (see callback.hpp), through the in-process adapter.
  void add(NamedCallback cb);
  // The core's own callbacks and plugin adapters.
  void add(std::unique_ptr<detail::InternalCallback> cb, Listing listing = Listing::listed);
  const std::vector<std::unique_ptr<detail::InternalCallback>>& callbacks() const noexcept {
    return callbacks_;
  }
  // The names of the listed callbacks, in calling order.
  std::vector<std::string> listed_names() const;
  detail::InternalCallback* find(const std::string& name) const noexcept;
  // Callback list management (HF's pop_callback; callback_list.cpp): takes out
  // the callback named `name`, or whose object or embedder's Callback is
  // `instance`, keeping the order of the others; nullptr when there is none.
  std::unique_ptr<detail::InternalCallback> pop(const std::string& name);
  std::unique_ptr<detail::InternalCallback> pop_instance(const void* instance);
  // Takes every callback out, listed and internal, in calling order (the list
  // is empty after), for a caller that destroys them itself: the Trainer's
  // bounded end of its callbacks (trainer/callback_teardown.cpp).
  std::vector<std::unique_ptr<detail::InternalCallback>> take_all();

  // Fire one event. Resets the flags HF resets for that event, calls every
  // enabled callback whose mask has the event, and writes the merged flags back
  // into `control`. Throws CallbackError only under PluginErrorPolicy::fail (or
  // for a critical callback), never at EXCEPTION: the run is ending by an error
  // already, so a callback failing there is logged and the others still run.
  void fire(EventId event, const TrainerState& state, TrainerControl& control,
            const EventPayload& payload = {});

  // From now on every callback call is timed as the action
  // "[Callback]<name>.<event>" ("[Isolated]..." for one in a helper process:
  // the round trip); nullptr stops it. The profiler outlives the handler's use of it.
  void set_profiler(Profiler* profiler);

  // Names (and the event + message) of callbacks disabled after an error.
  struct Disabled {
    std::string callback;
    std::string event;
    std::string message;
  };
  std::vector<Disabled> disabled() const;

  // A thread-safe stop request from a plugin (th_host.request_stop); applied as
  // should_training_stop at the next fire().
  void request_stop(const std::string& reason);
  bool stop_requested() const noexcept { return stop_requested_.load(std::memory_order_relaxed); }
  // The reason given with the first stop request ("" when none).
  std::string stop_reason() const;

  // The event whose callbacks are running; -1 between events.
  EventId current_event() const noexcept { return current_event_; }
  // For a thread watching fire() on another (bounded_fire.hpp): the callback
  // being called ("" between calls), and a count that grows at each call.
  std::string running_callback() const;
  uint64_t calls_started() const noexcept { return calls_started_.load(std::memory_order_relaxed); }

  // Stateful callbacks -> state.stateful_callbacks (HF layout, TrainerControl included).
  void save_states(TrainerState& state, const TrainerControl& control);
  // Restores each callback found in state.stateful_callbacks.
  void load_states(const TrainerState& state);
  // Same, and restores the five flags from the "TrainerControl" entry.
  void load_states(const TrainerState& state, TrainerControl& control);

 private:
  PluginErrorPolicy policy_;
  std::vector<std::unique_ptr<detail::InternalCallback>> callbacks_;
  std::vector<char> enabled_;
  std::vector<uint64_t> masks_;  // event_mask() of each callback, read once at add()
  std::vector<char> critical_;   // critical() of each callback, read once at add()
  std::vector<char> internal_;   // Listing::internal at add()
  std::vector<uint64_t> deferred_;  // deferred_events() of each callback, read once at add()
  EventId current_event_ = -1;
  mutable std::mutex disabled_mu_;
  std::vector<Disabled> disabled_;
  std::atomic<bool> stop_requested_{false};
  std::string stop_reason_;  // guarded by disabled_mu_
  // Written by the thread in fire() only; read by a watcher (running_callback()).
  std::atomic<int64_t> running_{-1};
  std::atomic<uint64_t> calls_started_{0};
  Profiler* profiler_ = nullptr;
  // The profiler's action of (callback, event), made at its first call.
  std::unordered_map<const detail::InternalCallback*, std::vector<int>> profile_actions_;

  // Calls callback `index` at `event`, timed when a profiler is set.
  void call(size_t index, EventId event, const th_event_args& args);
  // Collects the answer of a deferred call, timed as call() (what the
  // training thread waits for it).
  void end_call(size_t index, EventId event);
  // The profiler's action of (callback, event); -1 when not profiling.
  int profile_action(size_t index, EventId event);

  // Records the failure and applies the policy (logs one error line; throws
  // CallbackError under PluginErrorPolicy::fail, except `at_exception`).
  void failed(size_t index, const char* where, const std::string& message, bool at_exception = false);
  // Takes callback `index` out of the list and out of every per-callback vector.
  std::unique_ptr<detail::InternalCallback> take_at(size_t index);
};

}  // namespace trainhook
