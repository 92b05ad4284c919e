// An event whose callbacks may not run forever: the trainer fires on_train_end
// this way (issue 22), so a plugin that hangs in its end-of-run work (an
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
};

// Why the wait ended before every callback returned.
struct FireOverrun {
  std::string callback;  // the callback running then ("" between two calls)
  int signal = 0;        // the signal that ended the wait; 0: `callback` ran over the bound
  double seconds = 0;    // how long `callback` had been running
};

// handler.fire(event, ...) on a helper thread, the calling thread waiting.
// Returns nullopt when every callback returned (an exception fire() threw is
// rethrown here). On an overrun the helper thread is left running inside the
// callback, still using `handler`, `state`, `control` and `payload`: the caller
// must leave the process (std::_Exit) without destroying them or unloading
// any plugin.
std::optional<FireOverrun> fire_bounded(CallbackHandler& handler, EventId event, const TrainerState& state,
                                        TrainerControl& control, const EventPayload& payload,
                                        const BoundedFireOptions& options);

}  // namespace trainhook
