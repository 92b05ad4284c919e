#include <trainhook/plugin_host/containment/process_containment.hpp>

#include "crash_handler.hpp"

#include <trainhook/common/signal_safe_write.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <string>

namespace trainhook {
namespace {

// The signals whose dispositions the host owns: SignalGuard's two, and the
// crash handler's five (crash_handler.cpp installs them; only read here).
constexpr int kWatchedSignals[] = {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

const char* signal_name(int sig) noexcept {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "a signal";
  }
}

// The fork watch. The atfork child handler runs on the forking thread in the
// child, so the crash handler's per-thread call scope (every PluginCallGuard
// sits inside a PluginCallScope) tells whether the fork happened inside a
// plugin call on that thread: one thread-local for both, read per event.
std::atomic<bool> g_watching{false};
std::atomic<pid_t> g_host_pid{0};

void on_fork_child() {
  if (detail::plugin_call_active()) detail::g_forked_in_plugin_call.store(true, std::memory_order_relaxed);
}

void write_number(long long v) noexcept {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf - 1, v);
  *res.ptr = '\0';
  write_stderr_signal_safe(buf);
}


bool is_open(int fd) noexcept { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

// Opens /dev/null onto descriptor fd (0-2; without close-on-exec, as a
// standard descriptor must be).
bool fill_with_dev_null(int fd) noexcept {
  const int null_fd = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
  if (null_fd < 0) return false;
  if (null_fd == fd) return true;
  const bool done = ::dup2(null_fd, fd) == fd;
  ::close(null_fd);
  return done;
}

std::string current_dir() {
  char buf[PATH_MAX];
  return ::getcwd(buf, sizeof buf) != nullptr ? std::string(buf) : std::string();
}

// Where descriptor fd points now, for a message ("/path/file", "pipe:[123]").
std::string fd_target(int fd) {
  char buf[PATH_MAX];
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "another file";
  return std::string(buf, static_cast<size_t>(n));
}

bool same_disposition(const struct sigaction& a, const struct sigaction& b) noexcept {
  return reinterpret_cast<void*>(a.sa_handler) == reinterpret_cast<void*>(b.sa_handler) &&
         a.sa_flags == b.sa_flags;
}

}  // namespace

std::vector<int> reopen_closed_standard_descriptors() noexcept {
  std::vector<int> filled;
  for (int fd = 0; fd <= 2; ++fd) {
    if (!is_open(fd) && fill_with_dev_null(fd)) filled.push_back(fd);
  }
  return filled;
}

std::string describe_signal_disposition(const struct sigaction& action) {
  if (!(action.sa_flags & SA_SIGINFO)) {
    if (action.sa_handler == SIG_IGN) return "SIG_IGN";
    if (action.sa_handler == SIG_DFL) return "SIG_DFL";
  }
  const void* address = reinterpret_cast<void*>(action.sa_handler);
  Dl_info info{};
  if (::dladdr(address, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0')
    return std::string("a handler in ") + info.dli_fname;
  return "a handler outside any loaded library";
}

const char* standard_descriptor_name(int fd) noexcept {
  switch (fd) {
    case 0:
      return "stdin";
    case 1:
      return "stdout";
    case 2:
      return "stderr";
    default:
      return "a descriptor";
  }
}

namespace detail {

void watch_forks_in_plugin_calls() noexcept {
  if (g_watching.exchange(true)) return;
  g_host_pid.store(::getpid());
  ::pthread_atfork(nullptr, nullptr, on_fork_child);
}

std::atomic<bool> g_forked_in_plugin_call{false};

// Only write(2) and _exit: the child of a threaded process may not take the
// locks (heap, stdio, spdlog) another thread of the parent held at the fork.
void end_forked_child(const char* file, const char* callback, const char* what) noexcept {
  write_stderr_signal_safe("trainhook: fatal: callback '");
  write_stderr_signal_safe(callback);
  write_stderr_signal_safe("' from ");
  write_stderr_signal_safe(file);
  write_stderr_signal_safe(" forked a child process (PID ");
  write_number(::getpid());
  write_stderr_signal_safe(") during ");
  write_stderr_signal_safe(what);
  write_stderr_signal_safe(" that returned into the trainer; the child ends here with status ");
  write_number(kForkedChildStatus);
  write_stderr_signal_safe(" and the run goes on in PID ");
  write_number(g_host_pid.load(std::memory_order_relaxed));
  write_stderr_signal_safe(" alone (a plugin's child must end with _exit() or exec() before returning)\n");
  ::_exit(kForkedChildStatus);
}

ProcessStateCheck::ProcessStateCheck() noexcept {
  for (int i = 0; i < kSignalCount; ++i)
    have_signal_[i] = ::sigaction(kWatchedSignals[i], nullptr, &signals_[i]) == 0;
  sigemptyset(&blocked_);
  have_blocked_ = ::pthread_sigmask(SIG_BLOCK, nullptr, &blocked_) == 0;
  for (int fd = 0; fd <= 2; ++fd) {
    saved_fd_[fd] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    struct stat st {};
    if (saved_fd_[fd] >= 0 && ::fstat(saved_fd_[fd], &st) == 0) {
      dev_[fd] = static_cast<unsigned long>(st.st_dev);
      ino_[fd] = static_cast<unsigned long>(st.st_ino);
    } else {
      dev_[fd] = ino_[fd] = 0;
    }
  }
  try {
    cwd_ = current_dir();
  } catch (...) {
    cwd_.clear();
  }
}

ProcessStateCheck::~ProcessStateCheck() {
  for (int fd = 0; fd <= 2; ++fd)
    if (saved_fd_[fd] >= 0) ::close(saved_fd_[fd]);
}

std::vector<std::string> ProcessStateCheck::restore() {
  std::vector<std::string> changes;
  // Descriptors first: the warnings about the rest go to the console.
  for (int fd = 0; fd <= 2; ++fd) {
    const bool open_now = is_open(fd);
    if (saved_fd_[fd] < 0) {
      // Closed before the call (not the plugin's doing; the CLI fills 0-2 at
      // start): fill the hole quietly all the same.
      if (!open_now) fill_with_dev_null(fd);
      continue;
    }
    struct stat st {};
    const bool replaced = open_now && ::fstat(fd, &st) == 0 &&
                          (static_cast<unsigned long>(st.st_dev) != dev_[fd] ||
                           static_cast<unsigned long>(st.st_ino) != ino_[fd]);
    if (open_now && !replaced) continue;
    const std::string which = "descriptor " + std::to_string(fd) + " (" + standard_descriptor_name(fd) + ")";
    const std::string target = replaced ? fd_target(fd) : std::string();
    std::string how = "put back as it was";
    if (::dup2(saved_fd_[fd], fd) != fd) {
      const int err = errno;
      how = !open_now && fill_with_dev_null(fd)
                ? "opened onto /dev/null"
                : "could not be put back (" + std::string(std::strerror(err)) + ")";
    }
    if (replaced)
      changes.push_back("pointed " + which + " at " + target + "; it was " + how +
                        ", so the run's console output does not go into that file (the plugin's own "
                        "writes to descriptor " +
                        std::to_string(fd) + " now go to the console)");
    else
      changes.push_back("closed " + which + "; it was " + how +
                        ", so no file opened later takes its number and receives the run's console output");
  }
  for (int i = 0; i < kSignalCount; ++i) {
    if (!have_signal_[i]) continue;
    const int sig = kWatchedSignals[i];
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0 || same_disposition(now, signals_[i])) continue;
    const std::string changed_to = describe_signal_disposition(now);
    ::sigaction(sig, &signals_[i], nullptr);
    std::string why;
    if (sig == SIGTERM || sig == SIGINT)
      why = " (a first SIGTERM/SIGINT still finishes the step, saves a checkpoint and exits 128+signal)";
    else
      why = " (a crash in plugin code is still named)";
    changes.push_back("set the handling of " + std::string(signal_name(sig)) + " to " + changed_to +
                      "; the host put its own back (" + describe_signal_disposition(signals_[i]) + ")" + why);
  }
  // A blocked SIGTERM stays pending in this thread and in every thread it
  // starts later (the mask is inherited): the stop would never come.
  sigset_t blocked_now;
  sigemptyset(&blocked_now);
  if (have_blocked_ && ::pthread_sigmask(SIG_BLOCK, nullptr, &blocked_now) == 0) {
    for (const int sig : {SIGTERM, SIGINT}) {
      if (!sigismember(&blocked_now, sig) || sigismember(&blocked_, sig)) continue;
      sigset_t one;
      sigemptyset(&one);
      sigaddset(&one, sig);
      ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      changes.push_back(
          "blocked " + std::string(signal_name(sig)) +
          " on the calling thread (and so on every thread started after it); the host unblocked it");
    }
  }
  if (!cwd_.empty()) {
    const std::string now = current_dir();
    if (!now.empty() && now != cwd_)
      changes.push_back("changed the working directory from " + cwd_ + " to " + now +
                        "; the run's own paths were made absolute at start and stay where they were, but "
                        "relative paths given to plugins now resolve from " +
                        now);
  }
  return changes;
}

}  // namespace detail
}  // namespace trainhook
