// The signals `--requeue_signal` accepts, by name (shared by the argument
// validation and the trainer's SignalGuard). SIGTERM and SIGINT stay the
// stop signals; the others that end or stop a process are not offered.
#pragma once

#include <string>

namespace trainhook {

// Exit status of a run stopped by the requeue signal whose Slurm job was
// requeued (EX_TEMPFAIL: "try again later", which is what will happen).
constexpr int kRequeuedExitStatus = 75;

// What the flag accepts, for messages: "USR1, USR2, HUP, ... or none".
const char* requeue_signal_choices() noexcept;

// The signal named `name` ("USR1", "SIGUSR1", "usr1"), 0 for "none", -1
// when the name is none of requeue_signal_choices().
int requeue_signal_number(const std::string& name);

// "USR1" for SIGUSR1, "" for a signal not in the list.
const char* requeue_signal_name(int sig) noexcept;

}  // namespace trainhook
