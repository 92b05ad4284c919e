#include "crash_handler.hpp"

#include <trainhook/common/signal_safe_write.hpp>
#include <trainhook/plugin_host/plugin_exit_guard.hpp>

#include <signal.h>
#include <unistd.h>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

namespace trainhook::detail {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
std::atomic<bool> g_installed{false};
thread_local PluginCallScope* t_current = nullptr;

// The last plugin call on any thread. Three relaxed stores: a reader may mix
// the names of two calls racing on two threads, which only blurs a message
// (events run on one thread at a time).
std::atomic<const char*> g_last_file{nullptr};
std::atomic<const char*> g_last_callback{nullptr};
std::atomic<const char*> g_last_what{nullptr};

// The plugin files whose callbacks were created, append-only, for the exit message.
constexpr int kMaxFiles = 32;
std::atomic<const char*> g_files[kMaxFiles];
std::atomic<int> g_file_count{0};

// Interned names; never freed (nor destroyed at exit: the exit handler may
// run after static destructors), so the pointers stay valid.
std::mutex& names_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::set<std::string>& names() {
  static auto* s = new std::set<std::string>;
  return *s;
}

std::atomic<int> g_exit_armed{0};
std::atomic<bool> g_exit_registered{false};
// The process that armed: a child forked without exec (an isolated plugin's
// process, say) inherits the count but ends as it likes.
std::atomic<pid_t> g_exit_pid{0};

void write_int(int v) noexcept {
  char buf[16];
  char* p = buf + sizeof buf;
  *--p = '\0';
  do {
    *--p = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && p > buf);
  write_stderr_signal_safe(p);
}

void on_exit_called() { plugin_exit_report("exit()"); }
void on_quick_exit_called() { plugin_exit_report("quick_exit()"); }

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

// Runs inside exit()/quick_exit(): only write(2) and _exit, since the thread
// that called exit may have interrupted another holding the stdio or heap
// locks. Does nothing when no guard is armed (the trainer's own return).
void plugin_exit_report(const char* how) noexcept {
  if (g_exit_armed.load() <= 0 || g_exit_pid.load() != ::getpid()) return;
  const PluginCallScope* scope = t_current;
  write_stderr_signal_safe("\ntrainhook: fatal: ");
  if (scope != nullptr) {
    write_stderr_signal_safe("callback '");
    write_stderr_signal_safe(scope->callback_);
    write_stderr_signal_safe("' from ");
    write_stderr_signal_safe(scope->file_);
    write_stderr_signal_safe(" called ");
    write_stderr_signal_safe(how);
    write_stderr_signal_safe(" while running ");
    write_stderr_signal_safe(scope->what_);
  } else {
    write_stderr_signal_safe(how);
    write_stderr_signal_safe(
        " was called outside any callback call (from a plugin's own thread, for instance) during the run; ");
    const char* callback = g_last_callback.load(std::memory_order_relaxed);
    if (callback == nullptr) {
      write_stderr_signal_safe("no callback had been called yet");
    } else {
      write_stderr_signal_safe("the last callback call was '");
      write_stderr_signal_safe(callback);
      write_stderr_signal_safe("' from ");
      write_stderr_signal_safe(g_last_file.load(std::memory_order_relaxed));
      write_stderr_signal_safe(" (");
      write_stderr_signal_safe(g_last_what.load(std::memory_order_relaxed));
      write_stderr_signal_safe(")");
    }
    const int files = g_file_count.load();
    write_stderr_signal_safe("; plugin files loaded: ");
    if (files == 0) write_stderr_signal_safe("none");
    for (int i = 0; i < files && i < kMaxFiles; ++i) {
      if (i > 0) write_stderr_signal_safe(", ");
      write_stderr_signal_safe(g_files[i].load());
    }
  }
  write_stderr_signal_safe(
      "; the run did not finish (files saved before are intact, nothing more is saved); exit status ");
  write_int(kPluginExitStatus);
  write_stderr_signal_safe("\n");
  ::_exit(kPluginExitStatus);
}

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

PluginCallNames plugin_call_names(const std::string& file, const std::string& callback) {
  std::lock_guard<std::mutex> lock(names_mutex());
  const auto [f, added] = names().insert(file);
  if (added) {
    const int n = g_file_count.load();
    if (n < kMaxFiles) {
      g_files[n].store(f->c_str());
      g_file_count.store(n + 1);
    }
  }
  return {f->c_str(), names().insert(callback).first->c_str()};
}

PluginCallScope::PluginCallScope(const char* file, const char* callback, const char* what) noexcept
    : file_(file), callback_(callback), what_(what), outer_(t_current) {
  t_current = this;
  g_last_file.store(file, std::memory_order_relaxed);
  g_last_callback.store(callback, std::memory_order_relaxed);
  g_last_what.store(what, std::memory_order_relaxed);
}

PluginCallScope::~PluginCallScope() { t_current = outer_; }

}  // namespace trainhook::detail

namespace trainhook {

// Registered on the first guard, not at start-up: exit handlers run last
// registered first, so ours runs before the handlers and static destructors
// registered before the run (the trainer's, LibTorch's). Those registered
// later (plugins' own, statics first used during the run) run before it.
PluginExitGuard::PluginExitGuard() noexcept {
  if (!detail::g_exit_registered.exchange(true)) {
    std::atexit(detail::on_exit_called);
    std::at_quick_exit(detail::on_quick_exit_called);
  }
  detail::g_exit_pid.store(::getpid());
  detail::g_exit_armed.fetch_add(1);
}

PluginExitGuard::~PluginExitGuard() { detail::g_exit_armed.fetch_sub(1); }

}  // namespace trainhook
