// An event whose callbacks may not run forever: the trainer fires on_train_end
// this way, so a plugin that hangs in its end-of-run work (an
// integration flushing to a dead server) cannot hold the run. Owned by the
// reliability work (rel-core).
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace trainhook {

struct BoundedFireOptions {
  // Seconds one callback may run before the wait ends (> 0).
  double per_callback_seconds = 120;
  // The signal received so far (0: none); a new one ends the wait. Polled.
  std::function<int()> signal_received;
  // Called once, on the waiting thread, when a new signal arrives. Set: the wait
  // goes on for up to signal_grace_seconds more (the callbacks were told to end
  // now, e.g. ABI 1.2 end_requested, and keep what they hold); unset: it ends at once.
  std::function<void(int signal)> on_signal;
  double signal_grace_seconds = 10;
  // How often the waiting thread looks at the running callback and the signal.
  int poll_milliseconds = 50;
  BoundedFireOptions& set_per_callback_seconds(double s) {
    per_callback_seconds = s;
    return *this;
  }
  BoundedFireOptions& set_signal_received(std::function<int()> f) {
    signal_received = std::move(f);
    return *this;
  }
  BoundedFireOptions& set_on_signal(std::function<void(int)> f, double grace_seconds) {
    on_signal = std::move(f);
    signal_grace_seconds = grace_seconds;
    return *this;
  }
};

// Why the wait ended before every callback returned.
struct FireOverrun {
  std::string callback;  // the callback running then ("" between two calls)
  int signal = 0;        // the signal that ended the wait; 0: `callback` ran over the bound
  double seconds = 0;    // how long `callback` had been running
  // With a signal and on_signal: every callback returned within the grace (the
  // helper thread has ended; nothing is left running).
  bool finished = false;
};

// handler.fire(event, ...) on a helper thread, the calling thread waiting.
// Returns nullopt when every callback returned (an exception fire() threw is
// rethrown here), and a FireOverrun with `finished` when they returned after a
// signal. On an overrun (not `finished`) the helper thread is left running inside the
// callback, still using `handler`, `state`, `control` and `payload`: the caller
// must leave the process (std::_Exit) without destroying them or unloading
// any plugin.
std::optional<FireOverrun> fire_bounded(CallbackHandler& handler, EventId event, const TrainerState& state,
                                        TrainerControl& control, const EventPayload& payload,
                                        const BoundedFireOptions& options);

}  // namespace trainhook
