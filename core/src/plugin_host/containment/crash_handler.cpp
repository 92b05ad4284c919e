#include "crash_handler.hpp"

#include "plugin_address_table.hpp"

#include <trainhook/common/mapped_region_faults.hpp>
#include <trainhook/common/signal_safe_write.hpp>
#include <trainhook/plugin_host/containment/plugin_exit_guard.hpp>

#include <execinfo.h>
#include <signal.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <atomic>
#include <cstdint>
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

// The results-complete mark (set_results_complete) and exit() having begun.
std::atomic<int> g_complete_status{-1};
std::atomic<const char*> g_complete_dir{nullptr};
std::atomic<pid_t> g_complete_pid{0};  // a child forked later dies of its signal
std::atomic<bool> g_exiting{false};
std::atomic<int> g_end_status{-1};  // set_process_end_status
std::atomic<pid_t> g_end_pid{0};
// One crashing thread reports; another one crashing meanwhile waits for its
// line to be written (bounded) so the two lines do not interleave.
std::atomic<bool> g_reporting{false};
std::atomic<bool> g_reported{false};

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
void on_quick_exit_called() {
  plugin_exit_report("quick_exit()");
  // Not armed: a quick_exit() while the process ends (a library's destructor).
  process_end_exit_report("quick_exit()");
}

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

// The instruction the signal interrupted, from the handler's ucontext (0: unknown).
std::uintptr_t interrupted_pc(const void* context) noexcept {
  if (context == nullptr) return 0;
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

// The plugin library the crash belongs to and how it was found: the faulting
// instruction, then the faulting address (SIGSEGV/SIGBUS: the data touched;
// SIGILL/SIGFPE: the instruction), then the return addresses on the crashing
// thread's stack (a plugin that called abort() or a library function that
// crashed on its behalf), innermost first.
struct Attribution {
  PluginAddressEntry library;
  const char* how = "";
};

Attribution attribute(int sig, const void* info_in, const void* context) noexcept {
  if (const std::uintptr_t pc = interrupted_pc(context); pc != 0) {
    if (const auto lib = plugin_library_at(pc); lib.file != nullptr) return {lib, "the faulting instruction"};
  }
  const auto* info = static_cast<const siginfo_t*>(info_in);
  if (info != nullptr && info->si_code > 0 && sig != SIGABRT) {  // si_code > 0: sent by the kernel
    if (const auto lib = plugin_library_at(reinterpret_cast<std::uintptr_t>(info->si_addr));
        lib.file != nullptr)
      return {lib, sig == SIGSEGV || sig == SIGBUS ? "the address it touched" : "the faulting instruction"};
  }
  void* frames[64];
  const int n = ::backtrace(frames, 64);  // loaded at install: no allocation here
  for (int i = 0; i < n; ++i) {
    // A return address points after the call; the call itself is one byte before.
    const auto address = reinterpret_cast<std::uintptr_t>(frames[i]) - 1;
    if (const auto lib = plugin_library_at(address); lib.file != nullptr)
      return {lib, sig == 0 ? "a return address on the calling thread's stack"
                            : "a return address on the crashing thread's stack"};
  }
  return {};
}

void write_results_complete(int status) noexcept {
  write_stderr_signal_safe("; the run's results are complete: everything it writes is in ");
  write_stderr_signal_safe(g_complete_dir.load());
  write_stderr_signal_safe(
      " (the final model and results were saved before); exiting with the run's status ");
  write_int(status);
  write_stderr_signal_safe(" instead of dying of the signal");
}

void wait_for_other_report() noexcept {
  for (int i = 0; i < 100 && !g_reported.load(); ++i) {
    struct timespec t = {0, 10 * 1000 * 1000};
    ::nanosleep(&t, nullptr);
  }
}

void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  // A data file that shrank under its mapping is named as such, whichever
  // SIGBUS handler was installed last (this one or mapped_region_faults').
  report_mapped_region_fault(sig, info);
  if (!g_reporting.exchange(true)) {
    crash_handler_report(sig, info, context);
    g_reported.store(true);
  } else {
    wait_for_other_report();  // or a crash inside the report itself: then on without it
  }
  const int status = results_complete_status();
  if (status >= 0) ::_exit(status);
  // Back to what was there before (ASan's handler or the default) and raise
  // again: the process ends with the same signal and status as without us.
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &g_previous[i], nullptr);
  ::raise(sig);
}

// "plugin '<name>' from <file>[ (in <library>, <brought>)]" of a found plugin library.
void write_found_plugin(const Attribution& found, const char* brought) noexcept {
  write_stderr_signal_safe("plugin '");
  write_stderr_signal_safe(found.library.name != nullptr ? found.library.name : "?");
  write_stderr_signal_safe("' from ");
  write_stderr_signal_safe(found.library.file);
  if (found.library.library != nullptr) {
    write_stderr_signal_safe(" (in ");
    write_stderr_signal_safe(found.library.library);
    write_stderr_signal_safe(", ");
    write_stderr_signal_safe(brought);
    write_stderr_signal_safe(")");
  }
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
  // After the run wrote everything (a destroy() calling exit()), the run's
  // own status stands, as after a crash there.
  if (const int complete = results_complete_status(); complete >= 0) {
    write_stderr_signal_safe("; the run's results are complete: everything it writes is in ");
    write_stderr_signal_safe(g_complete_dir.load());
    write_stderr_signal_safe("; exiting with the run's status ");
    write_int(complete);
    write_stderr_signal_safe("\n");
    ::_exit(complete);
  }
  write_stderr_signal_safe(
      "; the run did not finish (files saved before are intact, nothing more is saved); exit status ");
  write_int(kPluginExitStatus);
  write_stderr_signal_safe("\n");
  ::_exit(kPluginExitStatus);
}

void process_end_exit_report(const char* how) noexcept {
  const int status = g_end_status.load();
  if (status < 0 || !g_exiting.load() || g_end_pid.load() != ::getpid()) return;
  const Attribution found = attribute(0, nullptr, nullptr);  // sig 0: the calling thread's stack
  write_stderr_signal_safe("trainhook: ");
  write_stderr_signal_safe(how);
  write_stderr_signal_safe(" was called while the process ended (after its callbacks were destroyed, in exit()), ");
  if (found.library.file != nullptr) {
    write_stderr_signal_safe("by ");
    write_found_plugin(found, "a library it brought into the process");
    write_stderr_signal_safe(" (its library's destructors run at exit; found by ");
    write_stderr_signal_safe(found.how);
    write_stderr_signal_safe(")");
  } else {
    write_stderr_signal_safe("by code that no plugin library holds (a library's destructor)");
  }
  if (results_complete_status() >= 0) {
    write_stderr_signal_safe("; the run's results are complete: everything it writes is in ");
    write_stderr_signal_safe(g_complete_dir.load());
  }
  write_stderr_signal_safe("; exiting with the run's status ");
  write_int(status);
  write_stderr_signal_safe(", not the one it passed\n");
  ::_exit(status);
}

void crash_handler_report(int sig, const void* info, const void* context) noexcept {
  const PluginCallScope* scope = t_current;
  const int complete = results_complete_status();
  if (scope != nullptr) {
    write_stderr_signal_safe("trainhook: fatal: ");
    write_stderr_signal_safe(signal_name(sig));
    write_stderr_signal_safe(" in plugin code: callback '");
    write_stderr_signal_safe(scope->callback_);
    write_stderr_signal_safe("' from ");
    write_stderr_signal_safe(scope->file_);
    write_stderr_signal_safe(", while running ");
    write_stderr_signal_safe(scope->what_);
  } else {
    const Attribution found = attribute(sig, info, context);
    if (found.library.file == nullptr && complete < 0) return;  // not plugin code, as far as we can tell
    write_stderr_signal_safe("trainhook: fatal: ");
    write_stderr_signal_safe(signal_name(sig));
    if (found.library.file != nullptr) {
      write_stderr_signal_safe(" in plugin code: ");
      write_found_plugin(found, "a library its load or its callbacks' creation brought into the process");
      write_stderr_signal_safe(g_exiting.load()
                                   ? ", while the process ends (its library's destructors run at exit)"
                                   : ", outside any callback call (on a thread of its own, say)");
      write_stderr_signal_safe("; found by ");
      write_stderr_signal_safe(found.how);
    } else {
      write_stderr_signal_safe(
          " after the run, in code that no plugin library holds (by the faulting instruction and the "
          "crashing thread's stack)");
    }
  }
  if (complete >= 0) write_results_complete(complete);
  write_stderr_signal_safe("\n");
}

void install_crash_handler() noexcept {
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer its own handler reports a crash with the stack, and
  // LeakSanitizer's exit-time tracer must keep the handlers it set.
  return;
#endif
  if (g_installed.exchange(true)) return;
  // glibc's first backtrace() loads libgcc's unwinder (dlopen, malloc): done
  // here, so the handler's call only walks the stack.
  void* warm[4];
  (void)::backtrace(warm, 4);
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction sa {};
    sa.sa_sigaction = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER | SA_SIGINFO;
    ::sigaction(kSignals[i], &sa, &g_previous[i]);
  }
}

const char* lasting_copy(const std::string& text) {
  std::lock_guard<std::mutex> lock(names_mutex());
  return names().insert(text).first->c_str();
}

PluginCallNow last_plugin_call() noexcept {
  return {g_last_file.load(std::memory_order_relaxed), g_last_callback.load(std::memory_order_relaxed),
          g_last_what.load(std::memory_order_relaxed)};
}

void set_results_complete(const char* output_dir, int exit_status) noexcept {
  g_complete_dir.store(output_dir);
  g_complete_pid.store(::getpid());
  g_complete_status.store(exit_status);
}
int results_complete_status() noexcept {
  return g_complete_pid.load() == ::getpid() ? g_complete_status.load() : -1;
}
const char* results_complete_dir() noexcept { return g_complete_dir.load(); }
void set_process_exiting() noexcept { g_exiting.store(true); }
void set_process_end_status(int status) noexcept {
  g_end_pid.store(::getpid());
  g_end_status.store(status);
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

bool plugin_call_active() noexcept { return t_current != nullptr; }

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
