// "End now" for the whole process (ABI 1.2 th_host.end_requested): set by the
// trainer when a SIGINT/SIGTERM arrives while callbacks run on_train_end, read
// by plugins through their host table from any thread. A process-wide flag,
// not per run: the signal ends the process.
#pragma once

namespace trainhook {

void request_end_now() noexcept;
bool end_now_requested() noexcept;

}  // namespace trainhook
