#include <trainhook/trainer/signal_guard.hpp>

#include <trainhook/common/signal_safe_write.hpp>
#include <trainhook/plugin_host/containment/process_containment.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>

#include <spdlog/spdlog.h>

#include <semaphore.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

namespace trainhook {
namespace {

std::atomic<int> g_received{0};
std::atomic<int> g_second{0};
// Posted by the handler on a second signal (sem_post is async-signal-safe) and
// by ~SignalGuard to end the watchdog.
sem_t g_wake;
std::thread g_watchdog;
struct sigaction g_old_int {};
struct sigaction g_old_term {};
struct sigaction g_old_requeue {};
std::atomic<int> g_requeue_signal{0};  // 0: none
// While a guard is alive: its handlers are checked during training (keep_own_handlers).
std::atomic<bool> g_active{false};
time_t g_next_check = 0;  // the training thread's; CLOCK_MONOTONIC_COARSE seconds

void on_signal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  if (!g_received.compare_exchange_strong(expected, sig)) {
    int none = 0;
    if (g_second.compare_exchange_strong(none, sig)) {
      write_stderr_signal_safe("\ntrainhook: second signal: stopping at once\n");
      request_end_now();  // integrations stop waiting for their flush (th_host.end_requested)
      ::sem_post(&g_wake);
    }
    errno = saved_errno;
    return;
  }
  record_stop_signal(sig);  // th_host.stop_signal: the run ends as stopped, not finished
  write_stderr_signal_safe("\ntrainhook: got ");
  write_stderr_signal_safe(SignalGuard::name(sig));
  write_stderr_signal_safe(
      sig == g_requeue_signal.load()
          ? ": finishing the current step, saving a checkpoint, stopping and requeueing the Slurm job (send it "
            "again to stop at once)\n"
          : ": finishing the current step, saving a checkpoint and stopping (send it again to stop at once)\n");
  errno = saved_errno;
}

// Sleeps until a second signal (or the guard's end), then gives the training
// thread kSecondSignalSeconds to end the process (on_exception, 128+signal)
// before ending it itself.
void watchdog() {
  while (::sem_wait(&g_wake) != 0 && errno == EINTR) {
  }
  const int sig = g_second.load();
  if (sig == 0) return;  // the guard ended first
  timespec deadline{};
  ::clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += static_cast<time_t>(kSecondSignalSeconds);
  // Further posts (the guard's end) do not end the wait: only the deadline.
  for (;;) {
    if (::sem_timedwait(&g_wake, &deadline) != 0 && errno == ETIMEDOUT) break;
  }
  write_stderr_signal_safe("trainhook: the run did not end within 10 s of the second signal; exiting now\n");
  ::_exit(128 + sig);
}

void install(int sig, struct sigaction* old) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(sig, &sa, old);
}

// At most once a second, at a step end: puts the guard's handlers back when
// something replaced them while training (a plugin's own thread, or an event
// other than create and on_train_begin, which plugin_callback checks itself).
// Two sigaction reads a second: nothing a step notices. A signal that arrives
// between the change and the check still meets the plugin's disposition.
void keep_own_handlers() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  if (now.tv_sec < g_next_check) return;
  g_next_check = now.tv_sec + 1;
  for (const int sig : {SIGTERM, SIGINT, g_requeue_signal.load()}) {
    if (sig == 0) continue;
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == on_signal) continue;
    install(sig, nullptr);
    spdlog::warn(
        "the handling of {} was changed during training, to {} (from a plugin's own thread, or a callback "
        "outside create and on_train_begin); the host put its own back, so a first {} still "
        "finishes the step and saves a checkpoint",
        SignalGuard::name(sig), describe_signal_disposition(current), SignalGuard::name(sig));
  }
  // And what a plugin's own thread did to descriptors 0-2 and the umask.
  detail::check_process_state_at_step_end(/*any_time=*/true);
}

}  // namespace

StoppedBySignal::StoppedBySignal(int sig)
    : std::runtime_error(std::string("stopped by a second ") + SignalGuard::name(sig) +
                         ": the run was ended at once, without a checkpoint"),
      sig_(sig) {}

SignalGuard::SignalGuard(int requeue_signal) {
  g_requeue_signal.store(requeue_signal);
  g_received.store(0);
  g_second.store(0);
  record_stop_signal(0);
  ::sem_init(&g_wake, 0, 0);
  g_watchdog = std::thread(watchdog);
  install(SIGINT, &g_old_int);
  install(SIGTERM, &g_old_term);
  if (requeue_signal != 0) install(requeue_signal, &g_old_requeue);
  g_next_check = 0;
  g_active.store(true);
}

SignalGuard::~SignalGuard() {
  g_active.store(false);
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
  if (const int sig = g_requeue_signal.load(); sig != 0) ::sigaction(sig, &g_old_requeue, nullptr);
  if (g_second.load() != 0) {
    // Armed: it ends the process at its deadline if nothing else does first.
    g_watchdog.detach();
    return;
  }
  ::sem_post(&g_wake);
  g_watchdog.join();
  ::sem_destroy(&g_wake);
}

int SignalGuard::received() noexcept { return g_received.load(); }
int SignalGuard::second_received() noexcept { return g_second.load(); }
bool SignalGuard::requeue_requested() noexcept {
  const int sig = g_received.load();
  return sig != 0 && sig == g_requeue_signal.load();
}

const char* SignalGuard::name(int sig) noexcept {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGHUP:
      return "SIGHUP";
    case SIGALRM:
      return "SIGALRM";
    case SIGURG:
      return "SIGURG";
    case SIGXCPU:
      return "SIGXCPU";
    case SIGXFSZ:
      return "SIGXFSZ";
    case SIGVTALRM:
      return "SIGVTALRM";
    case SIGPROF:
      return "SIGPROF";
    default:
      return "a signal";
  }
}

void apply_stop_signal(TrainerControl& control) noexcept {
  try {
    // Descriptors 0-2 and the umask after the step's plugin calls, before the
    // step's log, evaluation and save open files (nothing when none ran).
    detail::check_process_state_at_step_end();
    if (g_active.load(std::memory_order_relaxed)) keep_own_handlers();
  } catch (...) {
    // a warning that could not be written; what changed is back all the same
  }
  if (g_received.load() == 0) return;
  control.should_save = true;
  control.should_training_stop = true;
}

void throw_if_second_signal() {
  if (const int sig = g_second.load()) throw StoppedBySignal(sig);
}

}  // namespace trainhook
