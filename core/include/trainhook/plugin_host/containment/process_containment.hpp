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
//  - descriptors 0-2 and the umask later in the run: after every other plugin
//    call (events, save_state, load_state, destroy) one poll() of 0-2 and one
//    umask() find a closed descriptor or a changed umask, put them back and
//    name the call. The per-step events (step begin to end, prediction step)
//    only note the call (two stores): the host checks once at the step's end,
//    before the step's log, evaluation and save open any file, and names the
//    callbacks of the step. A system call per per-step call would cost more
//    than the dispatch itself (bench/dispatch).
//  - the file size limit: a plugin that lowers RLIMIT_FSIZE in create or
//    on_train_begin is named and the limit put back when the hard limit
//    allows; the CLI ignores SIGXFSZ (ignore_file_size_signal), so a file that
//    grows past any limit fails with EFBIG and the write's error names it.
//
// Owned by plugin_host; the crash handler (crash_handler.hpp) is another
// developer's and is only read here: its dispositions are compared and put
// back, never installed.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

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

// Sets SIGXFSZ to SIG_IGN: a write past RLIMIT_FSIZE (the user's `ulimit -f`,
// or a plugin's setrlimit) then fails with EFBIG, which the writer reports
// naming the file and the limit (checkpoint/atomic_file.hpp), instead of the
// signal ending the process without a word.
void ignore_file_size_signal() noexcept;

// "SIG_IGN", "SIG_DFL", or "a handler in <library or program file>" (dladdr).
std::string describe_signal_disposition(const struct sigaction& action);

// "stdin", "stdout", "stderr".
const char* standard_descriptor_name(int fd) noexcept;

namespace detail {

// Registers the fork watch (pthread_atfork) once per process and records the
// host's PID; called before the first plugin call (PluginCallback's create).
void watch_forks_in_plugin_calls() noexcept;

// Records what the checks after plugin calls compare with: duplicates of
// descriptors 0-2 (a closed one is put back as it was) and the umask. Called
// before each plugin's create, so what an embedder set between runs is the
// reference, not what the first run found.
void remember_process_state() noexcept;

// After a plugin call other than create/on_train_begin (which take a
// ProcessStateCheck): one poll() of descriptors 0-2 and one umask(). A closed
// descriptor is put back, a changed umask too, and each is warned about
// naming `callback` from `file` in `what` (and the per-step calls noted since
// the last check, which may have done it). Does nothing before
// remember_process_state.
void check_process_state_after(const char* file, const char* callback, const char* what);

// A per-step call with no check after it: noted (the callback, its last
// per-step event) for the check at the step's end. The strings must live
// until the process ends (PluginCallNames, event names). Events run on one
// thread at a time, so no lock.
void note_unchecked_plugin_call(const char* file, const char* callback, const char* what) noexcept;

// At a step's end, on the training thread: the check of check_process_state_after
// when a per-step call was noted since the last check (else nothing: no
// system call), naming the callbacks noted. `any_time`: check even when
// none was (a plugin's own thread; SignalGuard's once-a-second check).
void check_process_state_at_step_end(bool any_time = false);

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
// back: the dispositions of SIGTERM, SIGINT, SIGXFSZ and the fault signals,
// whether the calling thread blocks SIGTERM/SIGINT, descriptors
// 0-2 (kept open as duplicates while the check lives, so a closed one can be
// put back as it was), the umask, the file size limit (RLIMIT_FSIZE) and the
// working directory. Taken just before a call; restore() just after it.
class ProcessStateCheck {
 public:
  ProcessStateCheck() noexcept;
  ~ProcessStateCheck();
  ProcessStateCheck(const ProcessStateCheck&) = delete;
  ProcessStateCheck& operator=(const ProcessStateCheck&) = delete;

  // Puts back the signal dispositions, descriptors 0-2, the umask and a lowered
  // file size limit (when the hard limit allows) the call changed and
  // returns one sentence per change ("closed descriptor 1 (stdout): ...");
  // a changed working directory is reported, not undone (the plugin may rely
  // on it; the run's own paths are absolute).
  std::vector<std::string> restore();

 private:
  static constexpr int kSignalCount = 8;
  struct sigaction signals_[kSignalCount];
  bool have_signal_[kSignalCount];
  sigset_t blocked_;  // the calling thread's signal mask (threads started later inherit it)
  bool have_blocked_;
  int saved_fd_[3];       // duplicates of 0-2 (close-on-exec), -1 when closed before
  unsigned long dev_[3];  // what 0-2 were (st_dev, st_ino)
  unsigned long ino_[3];
  std::string cwd_;  // empty when unreadable
  mode_t umask_;
  struct rlimit file_size_;
  bool have_file_size_;
};

}  // namespace detail
}  // namespace trainhook
