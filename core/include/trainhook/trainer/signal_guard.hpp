// What a cluster scheduler's SIGTERM (or Ctrl-C's SIGINT) does to a run.
// The first signal is recorded: the training loop finishes the
// current step, saves a checkpoint (every rank the same step: the flags are
// OR-reduced) and stops; the integrations flush at train end with their
// bounded waits; the CLI says what was done and exits 128 + signal.
// A second signal ends the run now: the handler records it and tells the
// callbacks to end now (th_host.end_requested); the training thread throws
// StoppedBySignal at its next event, so the callbacks hear on_exception (kind
// signal) and the CLI exits 128 + signal; a watchdog thread exits the process
// with that status if this has not happened within kSecondSignalSeconds (the
// training thread is stuck in a kernel or a callback). No LibTorch here.
// The handlers are the host's whatever an in-process plugin does: plugin_host
// puts back a disposition a plugin's create or on_train_begin changed
// (process_containment.hpp), and apply_stop_signal re-checks them at most once
// a second while training, putting them back with a warning.
// The requeue signal (--requeue_signal, Slurm's `--signal=USR1@90`) is a
// first signal like SIGTERM: the step ends, a checkpoint is saved, training
// stops; the CLI then requeues the Slurm job (launch_env.hpp) and exits 75.
#pragma once

#include <trainhook/callbacks/state.hpp>

#include <stdexcept>
#include <string>

namespace trainhook {

// How long after a second signal the process may take to end before the
// watchdog ends it (the bound of train_end.cpp's signal grace).
constexpr double kSecondSignalSeconds = 10;

// Thrown on the training thread at the first event after a second signal.
class StoppedBySignal : public std::runtime_error {
 public:
  explicit StoppedBySignal(int sig);
  int signal() const noexcept { return sig_; }

 private:
  int sig_;
};

class SignalGuard {
 public:
  // Installs the SIGINT/SIGTERM handlers (and that of `requeue_signal` when
  // not 0) and starts the watchdog.
  explicit SignalGuard(int requeue_signal = 0);
  ~SignalGuard();  // restores the previous handlers; the watchdog stays armed after a second signal
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

  // The first signal received (SIGINT, SIGTERM or the requeue signal), or 0.
  static int received() noexcept;
  // The second signal received, or 0.
  static int second_received() noexcept;
  // Whether the first signal was the requeue signal.
  static bool requeue_requested() noexcept;
  // "SIGTERM", "SIGINT", "SIGUSR1", ...
  static const char* name(int sig) noexcept;
};

// At a step end: when a signal was received, ask for a checkpoint and the end
// of training (no-op otherwise, and outside a SignalGuard). Inside a guard it
// also puts its handlers back if something replaced them (at most once a
// second). First it checks descriptors 0-2 and the umask after the step's
// in-process plugin calls (process_containment.hpp), before the step's log,
// evaluation and save open files.
void apply_stop_signal(TrainerControl& control) noexcept;

// At an event boundary: throws StoppedBySignal after a second signal.
void throw_if_second_signal();

}  // namespace trainhook
