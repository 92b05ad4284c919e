// What a cluster scheduler's SIGTERM (or Ctrl-C's SIGINT) does to a run.
// The first signal is recorded: the training loop finishes the
// current step, saves a checkpoint (every rank the same step: the flags are
// OR-reduced) and stops; the integrations flush at train end with their
// bounded waits; the CLI says what was done and exits 128 + signal. A second
// signal exits at once (128 + signal). No LibTorch here.
#pragma once

#include <trainhook/callbacks/state.hpp>

namespace trainhook {

class SignalGuard {
 public:
  SignalGuard();   // installs the SIGINT/SIGTERM handlers
  ~SignalGuard();  // restores the previous ones
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // The first signal received (SIGINT or SIGTERM), or 0.
  static int received() noexcept;
  // "SIGTERM", "SIGINT".
  static const char* name(int sig) noexcept;
};

// At a step end: when a signal was received, ask for a checkpoint and the end
// of training (no-op otherwise, and outside a SignalGuard).
void apply_stop_signal(TrainerControl& control) noexcept;

}  // namespace trainhook
