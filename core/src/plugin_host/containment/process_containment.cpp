#include <trainhook/plugin_host/containment/process_containment.hpp>

#include "crash_handler.hpp"

#include <trainhook/common/signal_safe_write.hpp>

#include <spdlog/spdlog.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace trainhook {
namespace {

// The signals whose dispositions the host owns: SignalGuard's two, the
// crash handler's five (crash_handler.cpp installs them; only read here) and
// SIGXFSZ (ignore_file_size_signal).
constexpr int kWatchedSignals[] = {SIGTERM, SIGINT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGXFSZ};

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
    case SIGXFSZ:
      return "SIGXFSZ";
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

// The umask without changing it: /proc/self/status (Linux 4.7), else the
// two-call read (a file created by another thread in between gets 022).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) != 0) continue;
    try {
      return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
    } catch (...) {
      break;
    }
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

std::string octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode));
  return buf;
}

std::string umask_change(mode_t was, mode_t now) {
  return "set the umask to " + octal(now) + " (files created after it get mode " + octal(0666 & ~now) +
         "); the host put back " + octal(was) + ", so the run's files stay readable as before";
}

std::string limit_text(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit) + " bytes";
}

// What check_process_state_after compares with (remember_process_state):
// duplicates of 0-2 for the process's life, and the umask.
std::atomic<bool> g_remembered{false};
int g_standard_copy[3] = {-1, -1, -1};
mode_t g_umask = 022;

// The per-step calls noted since the last check (note_unchecked_plugin_call):
// each callback once, with its last per-step event. Events run on one thread
// at a time; relaxed atomics keep a reader on another thread well defined.
struct UncheckedCall {
  std::atomic<const char*> file{nullptr};
  std::atomic<const char*> callback{nullptr};
  std::atomic<const char*> what{nullptr};
};
constexpr int kMaxUnchecked = 8;
UncheckedCall g_unchecked[kMaxUnchecked];
std::atomic<int> g_unchecked_count{0};
std::atomic<bool> g_unchecked_more{false};

std::string noted_calls() {
  std::string text;
  const int n = g_unchecked_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (!text.empty()) text += ", ";
    text += std::string("callback '") + g_unchecked[i].callback.load(std::memory_order_relaxed) + "' from " +
            g_unchecked[i].file.load(std::memory_order_relaxed) + " (last in " +
            g_unchecked[i].what.load(std::memory_order_relaxed) + ")";
  }
  if (g_unchecked_more.load(std::memory_order_relaxed)) text += ", and more";
  return text;
}

void forget_noted_calls() noexcept {
  g_unchecked_count.store(0, std::memory_order_relaxed);
  g_unchecked_more.store(false, std::memory_order_relaxed);
}

// One poll() of 0-2 and one umask(): puts back what changed since
// remember_process_state and says what, one sentence each.
std::vector<std::string> restore_standard_state() {
  std::vector<std::string> changes;
  struct pollfd fds[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  const int ready = ::poll(fds, 3, 0);
  const mode_t mask_now = ::umask(g_umask);  // the read puts the host's back at once
  if (ready > 0) {
    for (int fd = 0; fd <= 2; ++fd) {
      if (!(fds[fd].revents & POLLNVAL)) continue;
      std::string how = "put back as it was";
      if (g_standard_copy[fd] < 0 || ::dup2(g_standard_copy[fd], fd) != fd)
        how = fill_with_dev_null(fd) ? "opened onto /dev/null" : "could not be put back";
      changes.push_back("closed descriptor " + std::to_string(fd) + " (" + standard_descriptor_name(fd) +
                        "); it was " + how +
                        ", so no file opened later takes its number and receives the run's console output");
    }
  }
  if (mask_now != g_umask) changes.push_back(umask_change(g_umask, mask_now));
  return changes;
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

void ignore_file_size_signal() noexcept {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGXFSZ, &sa, nullptr);
}

namespace detail {

void watch_forks_in_plugin_calls() noexcept {
  if (g_watching.exchange(true)) return;
  g_host_pid.store(::getpid());
  ::pthread_atfork(nullptr, nullptr, on_fork_child);
}

std::atomic<bool> g_forked_in_plugin_call{false};

void remember_process_state() noexcept {
  for (int fd = 0; fd <= 2; ++fd) {
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (g_standard_copy[fd] >= 0) ::close(g_standard_copy[fd]);
    g_standard_copy[fd] = copy;
  }
  try {
    g_umask = current_umask();
  } catch (...) {
    g_umask = ::umask(022);
    ::umask(g_umask);
  }
  g_remembered.store(true);
}

void note_unchecked_plugin_call(const char* file, const char* callback, const char* what) noexcept {
  const int n = g_unchecked_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (g_unchecked[i].callback.load(std::memory_order_relaxed) == callback &&
        g_unchecked[i].file.load(std::memory_order_relaxed) == file) {
      g_unchecked[i].what.store(what, std::memory_order_relaxed);
      return;
    }
  }
  if (n == kMaxUnchecked) {
    g_unchecked_more.store(true, std::memory_order_relaxed);
    return;
  }
  g_unchecked[n].file.store(file, std::memory_order_relaxed);
  g_unchecked[n].callback.store(callback, std::memory_order_relaxed);
  g_unchecked[n].what.store(what, std::memory_order_relaxed);
  g_unchecked_count.store(n + 1, std::memory_order_relaxed);
}

void check_process_state_after(const char* file, const char* callback, const char* what) {
  if (!g_remembered.load(std::memory_order_relaxed)) return;
  const std::vector<std::string> changes = restore_standard_state();
  if (!changes.empty()) {
    const std::string earlier = noted_calls();
    for (const auto& change : changes)
      spdlog::warn("callback '{}' from {} in {}{}: {}", callback, file, what,
                   earlier.empty() ? std::string()
                                   : ", or one of the per-step calls before it (" + earlier + ")",
                   change);
  }
  forget_noted_calls();
}

void check_process_state_at_step_end(bool any_time) {
  if (!g_remembered.load(std::memory_order_relaxed)) return;
  if (!any_time && g_unchecked_count.load(std::memory_order_relaxed) == 0) return;
  const std::vector<std::string> changes = restore_standard_state();
  if (!changes.empty()) {
    const int n = g_unchecked_count.load(std::memory_order_relaxed);
    std::string who;
    if (n == 1 && !g_unchecked_more.load(std::memory_order_relaxed))
      who = std::string("callback '") + g_unchecked[0].callback.load(std::memory_order_relaxed) + "' from " +
            g_unchecked[0].file.load(std::memory_order_relaxed) + " in a per-step event (the last: " +
            g_unchecked[0].what.load(std::memory_order_relaxed) + "; checked at the step's end)";
    else if (n > 1)
      who = "one of the callbacks called in this step's events (checked at the step's end): " + noted_calls();
    else
      who = "a plugin's own thread (no callback was called since the last check)";
    for (const auto& change : changes) spdlog::warn("{}: {}", who, change);
  }
  forget_noted_calls();
}

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
  try {
    umask_ = current_umask();
  } catch (...) {
    umask_ = ::umask(022);
    ::umask(umask_);
  }
  have_file_size_ = ::getrlimit(RLIMIT_FSIZE, &file_size_) == 0;
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
    else if (sig == SIGXFSZ)
      why = " (a file that grows past the file size limit fails with EFBIG and is named, instead of the "
            "signal ending the run)";
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
  if (const mode_t now = ::umask(umask_); now != umask_) changes.push_back(umask_change(umask_, now));
  struct rlimit file_size_now {};
  if (have_file_size_ && ::getrlimit(RLIMIT_FSIZE, &file_size_now) == 0 &&
      file_size_now.rlim_cur < file_size_.rlim_cur) {
    struct rlimit back = file_size_now;
    back.rlim_cur = file_size_now.rlim_max == RLIM_INFINITY || file_size_.rlim_cur <= file_size_now.rlim_max
                        ? file_size_.rlim_cur
                        : file_size_now.rlim_max;
    const bool put_back = back.rlim_cur == file_size_.rlim_cur && ::setrlimit(RLIMIT_FSIZE, &back) == 0;
    changes.push_back(
        "lowered the file size limit (RLIMIT_FSIZE) from " + limit_text(file_size_.rlim_cur) + " to " +
        limit_text(file_size_now.rlim_cur) +
        (put_back ? std::string("; the host put it back")
                  : "; it could not be put back (the plugin lowered the hard limit too): a file the run writes "
                    "past it fails with EFBIG (File too large), named with the limit"));
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
