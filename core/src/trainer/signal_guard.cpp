#include <trainhook/trainer/signal_guard.hpp>

#include <trainhook/common/signal_safe_write.hpp>
#include <trainhook/plugin_host/end_request.hpp>

#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cstring>

namespace trainhook {
namespace {

std::atomic<int> g_received{0};
struct sigaction g_old_int {};
struct sigaction g_old_term {};

void on_signal(int sig) {
  int expected = 0;
  if (!g_received.compare_exchange_strong(expected, sig)) {
    write_stderr_signal_safe("\ntrainhook: second signal: stopping at once\n");
    ::_exit(128 + sig);
  }
  record_stop_signal(sig);  // th_host.stop_signal: the run ends as stopped, not finished
  write_stderr_signal_safe("\ntrainhook: got ");
  write_stderr_signal_safe(SignalGuard::name(sig));
  write_stderr_signal_safe(
      ": finishing the current step, saving a checkpoint and stopping (send it again to stop at once)\n");
}

}  // namespace

SignalGuard::SignalGuard() {
  g_received.store(0);
  record_stop_signal(0);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGINT, &sa, &g_old_int);
  ::sigaction(SIGTERM, &sa, &g_old_term);
}

SignalGuard::~SignalGuard() {
  ::sigaction(SIGINT, &g_old_int, nullptr);
  ::sigaction(SIGTERM, &g_old_term, nullptr);
}

int SignalGuard::received() noexcept { return g_received.load(); }

const char* SignalGuard::name(int sig) noexcept {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "a signal";
  }
}

void apply_stop_signal(TrainerControl& control) noexcept {
  if (g_received.load() == 0) return;
  control.should_save = true;
  control.should_training_stop = true;
}

}  // namespace trainhook
