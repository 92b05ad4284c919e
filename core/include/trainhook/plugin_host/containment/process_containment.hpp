// What an in-process plugin may do to the process it shares with the host,
// and how the host keeps its own promises anyway (REFERENCE.md section 17):
//
//  - fork(): a child that returns from a plugin call into the trainer would
//    train on as a second writer of output_dir. A pthread_atfork child handler
//    notes when a fork happened inside a plugin call on the forking thread; the
//    wrapper around every plugin call (PluginCallGuard) ends such a child at
//    once with kForkedChildStatus and a message naming the plugin. A child the
//    plugin ends itself (_exit, exec) or keeps inside the plugin (a daemon
//    loop) never comes back and is left alone. Forks outside plugin calls (a
//    Python host's multiprocessing, say) are not the plugin's and are left alone.
//  - signal dispositions and descriptors 0-2: around a plugin's create and
//    on_train_begin the host takes a ProcessStateCheck; whatever the call
//    changed (SIGTERM/SIGINT and the crash handler's fault signals, a closed
//    or replaced stdin/stdout/stderr, the working directory) is put back and
//    reported, so the SIGTERM contract and the console hold whatever the plugin
//    did there. SignalGuard also re-checks its own handlers while training.
//  - chdir(): the CLI makes its path arguments absolute at start
//    (args/path_arguments.hpp), so a changed working directory moves nothing.
//
// Owned by plugin_host; the crash handler (crash_handler.hpp) is another
// developer's and is only read here: its dispositions are compared and put
// back, never installed.
#pragma once

#include <signal.h>

#include <atomic>
#include <string>
#include <vector>

namespace trainhook {

// The status of a child process that a plugin forked and that returned from
// the plugin call into the host (EX_OSERR of <sysexits.h>; 70 is a plugin's
// exit() in the run itself, plugin_exit_guard.hpp).
inline constexpr int kForkedChildStatus = 71;

// At start: each of descriptors 0, 1, 2 that is closed is opened onto
// /dev/null, so that no data file the run opens later can take its number
// (and receive the console output). Returns the descriptors it filled.
std::vector<int> reopen_closed_standard_descriptors() noexcept;

// "SIG_IGN", "SIG_DFL", or "a handler in <library or program file>" (dladdr).
std::string describe_signal_disposition(const struct sigaction& action);

// "stdin", "stdout", "stderr".
const char* standard_descriptor_name(int fd) noexcept;

namespace detail {

// Registers the fork watch (pthread_atfork) once per process and records the
// host's PID; called before the first plugin call (PluginCallback's create).
void watch_forks_in_plugin_calls() noexcept;

// Set only by the atfork child handler, in a child forked inside a plugin call.
extern std::atomic<bool> g_forked_in_plugin_call;

// Writes the message naming the callback, the file and the call to stderr
// (write(2) only: the child of a threaded process) and ends the child with
// _exit(kForkedChildStatus).
[[noreturn]] void end_forked_child(const char* file, const char* callback, const char* what) noexcept;

// Wraps a plugin call. When the process turns out to be a child forked inside
// the call (on this thread), the destructor ends it (end_forked_child). It must
// sit inside a PluginCallScope of the same thread (crash_handler.hpp), whose
// thread-local marks the call for the fork watch; the guard itself is inline
// and costs one relaxed load (it wraps every event: bench/dispatch). The
// strings must outlive the guard (PluginCallNames and event names live until exit).
class PluginCallGuard {
 public:
  PluginCallGuard(const char* file, const char* callback, const char* what) noexcept
      : file_(file), callback_(callback), what_(what) {}
  ~PluginCallGuard() {
    if (g_forked_in_plugin_call.load(std::memory_order_relaxed)) end_forked_child(file_, callback_, what_);
  }
  PluginCallGuard(const PluginCallGuard&) = delete;
  PluginCallGuard& operator=(const PluginCallGuard&) = delete;

 private:
  const char* file_;
  const char* callback_;
  const char* what_;
};

// The parts of the process state a plugin call may change behind the host's
// back: the dispositions of SIGTERM, SIGINT and the fault signals, whether the
// calling thread blocks SIGTERM/SIGINT, descriptors
// 0-2 (kept open as duplicates while the check lives, so a closed one can be
// put back as it was) and the working directory. Taken just before a call;
// restore() just after it.
class ProcessStateCheck {
 public:
  ProcessStateCheck() noexcept;
  ~ProcessStateCheck();
  ProcessStateCheck(const ProcessStateCheck&) = delete;
  ProcessStateCheck& operator=(const ProcessStateCheck&) = delete;

  // Puts back the signal dispositions and descriptors 0-2 the call changed and
  // returns one sentence per change ("closed descriptor 1 (stdout): ...");
  // a changed working directory is reported, not undone (the plugin may rely
  // on it; the run's own paths are absolute).
  std::vector<std::string> restore();

 private:
  static constexpr int kSignalCount = 7;
  struct sigaction signals_[kSignalCount];
  bool have_signal_[kSignalCount];
  sigset_t blocked_;  // the calling thread's signal mask (threads started later inherit it)
  bool have_blocked_;
  int saved_fd_[3];       // duplicates of 0-2 (close-on-exec), -1 when closed before
  unsigned long dev_[3];  // what 0-2 were (st_dev, st_ino)
  unsigned long ino_[3];
  std::string cwd_;  // empty when unreadable
};

}  // namespace detail
}  // namespace trainhook
