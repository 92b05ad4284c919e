// "End now" for the whole process (ABI 1.2 th_host.end_requested): set by the
// trainer when a SIGINT/SIGTERM arrives while callbacks run on_train_end, read
// by plugins through their host table from any thread. A process-wide flag,
// not per run: the signal ends the process.
#pragma once

namespace trainhook {

void request_end_now() noexcept;
bool end_now_requested() noexcept;

// The first SIGINT/SIGTERM that asked the run to stop and save (ABI 1.3
// th_host.stop_signal), 0 when none: recorded by the trainer's signal handler
// (async-signal-safe: a lock-free atomic), read by plugins from any thread.
void record_stop_signal(int sig) noexcept;
int stop_signal_received() noexcept;

}  // namespace trainhook
