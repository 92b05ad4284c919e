#include "crash_handler.hpp"

#include <trainhook/common/signal_safe_write.hpp>

#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cstring>

namespace trainhook::detail {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
std::atomic<bool> g_installed{false};
thread_local PluginCallScope* t_current = nullptr;

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGILL:
      return "SIGILL (illegal instruction)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGABRT:
      return "SIGABRT (abort)";
    default:
      return "a fatal signal";
  }
}

void on_fatal_signal(int sig) {
  crash_handler_report(sig);
  // Back to what was there before (ASan's handler or the default) and raise
  // again: the process ends with the same signal and status as without us.
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  ::raise(sig);
}

}  // namespace

void crash_handler_report(int sig) noexcept {
  const PluginCallScope* scope = t_current;
  if (scope == nullptr) return;
  write_stderr_signal_safe("trainhook: fatal: ");
  write_stderr_signal_safe(signal_name(sig));
  write_stderr_signal_safe(" in plugin code: callback '");
  write_stderr_signal_safe(scope->callback_);
  write_stderr_signal_safe("' from ");
  write_stderr_signal_safe(scope->file_);
  write_stderr_signal_safe(", while running ");
  write_stderr_signal_safe(scope->what_);
  write_stderr_signal_safe("\n");
}

void install_crash_handler() noexcept {
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer its own handler reports a crash with the stack, and
  // LeakSanitizer's exit-time tracer must keep the handlers it set.
  return;
#endif
  if (g_installed.exchange(true)) return;
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    ::sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

PluginCallScope::PluginCallScope(const char* file, const char* callback, const char* what) noexcept
    : file_(file), callback_(callback), what_(what), outer_(t_current) {
  t_current = this;
}

PluginCallScope::~PluginCallScope() { t_current = outer_; }

}  // namespace trainhook::detail
