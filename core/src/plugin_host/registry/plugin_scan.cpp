#include "plugin_scan.hpp"

#include "library_record_json.hpp"

#include "../isolation/helper_pipe.hpp"

#include <trainhook/common/errors.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

namespace trainhook::detail {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kResultFd = 3;  // scanner_main.cpp writes its JSON there
constexpr size_t kOutputTail = 2000;
// More than any record the scanner writes; a result pipe that a library's
// process fills with more is cut there (the answer's end is then missing).
constexpr size_t kMaxAnswer = size_t{16} << 20;

std::string signal_text(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

// A descriptor that becomes readable when `pid` exits (Linux 5.3+), or -1:
// then the wait checks with waitid every kExitCheck instead.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}
constexpr int64_t kExitCheckMs = 20;

std::string tail_of(const std::string& output) {
  std::string t = output.size() > kOutputTail ? output.substr(output.size() - kOutputTail) : output;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t.empty() ? "" : " (its output: " + t + ")";
}

}  // namespace

std::chrono::milliseconds scan_time_limit() {
  if (const char* env = std::getenv("TRAINHOOK_PLUGIN_SCAN_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 3600)
      throw PluginError(std::string("TRAINHOOK_PLUGIN_SCAN_TIMEOUT is '") + env +
                        "': expected seconds, a number above 0 and at most 3600");
    return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  }
  return std::chrono::seconds(10);
}

bool scan_in_helper(const fs::path& scanner, const fs::path& file, std::chrono::milliseconds limit,
                    LibraryRecord& rec) {
  HelperPipe result("the plugin scanner");
  HelperPipe output("the plugin scanner");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, result.write, kResultFd);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Signals the caller ignores or handles stay at their defaults in the scanner.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGCHLD})
    sigaddset(&defaults, sig);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  // A process group of its own (pgid = its pid): whatever the library's
  // constructors fork joins it, and kill(-pid) below ends them all. (A Ctrl-C
  // then reaches only the caller; the scanner dies with it, see scanner_main.cpp.)
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  const std::string scanner_s = scanner.string();
  const std::string file_s = file.string();
  const std::string parent_s = std::to_string(::getpid());
  char* const argv[] = {const_cast<char*>(scanner_s.c_str()), const_cast<char*>(file_s.c_str()),
                        const_cast<char*>(parent_s.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, scanner_s.c_str(), &actions, &attr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw PluginError("cannot start the plugin scanner " + scanner_s + ": " + std::strerror(rc));
  result.close_write();
  output.close_write();

  // Until the scanner's answer (one line) has arrived or the scanner itself
  // exited: its pipes may stay open in a process the library forked, so their
  // end of file says nothing.
  const int pidfd = open_pidfd(pid);
  std::string json;
  std::string printed;
  bool result_open = true;
  bool output_open = true;
  bool timed_out = false;
  bool exited = false;
  int wait_error = 0;
  auto answered = [&] { return json.find('\n') != std::string::npos; };
  const auto deadline = Clock::now() + limit;
  while (!exited && !answered()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3] = {{result_open ? result.read : -1, POLLIN, 0},
                     {output_open ? output.read : -1, POLLIN, 0},
                     {pidfd, POLLIN, 0}};
    const int n = ::poll(fds, 3, static_cast<int>(pidfd >= 0 ? left : std::min<int64_t>(left, kExitCheckMs)));
    if (n < 0 && errno != EINTR) {
      wait_error = errno;
      break;
    }
    if (result_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
      result_open = drain_pipe(result.read, json, kMaxAnswer, false);
    if (output_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
      output_open = drain_pipe(output.read, printed, kOutputTail, true);
    exited = pidfd >= 0 ? (fds[2].revents & POLLIN) != 0 : has_exited(pid);
  }
  // The whole group, while the scanner is not yet reaped (so its pid, the
  // group's id, cannot have been reused): the scanner if it hangs or has not
  // quite exited after answering, and every process the library started.
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  // What the scanner wrote before it exited is in the pipes now.
  if (result_open) drain_pipe(result.read, json, kMaxAnswer, false);
  if (output_open) drain_pipe(output.read, printed, kOutputTail, true);
  if (wait_error != 0)
    throw PluginError(std::string("waiting for the plugin scanner: ") + std::strerror(wait_error));

  rec.loaded = false;
  const std::string seconds =
      std::to_string(limit.count() / 1000) +
      (limit.count() % 1000 != 0 ? "." + std::to_string(limit.count() % 1000 / 100) : "");
  // A whole answer counts, however the scanner ended after writing it (it
  // exits at once; it may have been killed above before it got there).
  const size_t end = json.find('\n');
  if (end == std::string::npos) {
    if (timed_out) {
      rec.refused_reason =
          "did not answer within " + seconds +
          " s while loading (the scanner was killed; TRAINHOOK_PLUGIN_SCAN_TIMEOUT sets the limit)" +
          tail_of(printed);
      return true;
    }
    if (WIFSIGNALED(status)) {
      rec.refused_reason = "killed by " + signal_text(WTERMSIG(status)) + " while loading" + tail_of(printed);
      return false;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    rec.refused_reason = "exited with status " + std::to_string(code) + " while loading" + tail_of(printed);
    if (code == 0 && !json.empty())
      rec.refused_reason += " (its answer was cut short after " + std::to_string(json.size()) + " bytes)";
    return false;
  }
  try {
    record_from_json(nlohmann::json::parse(json.substr(0, end)), rec);
  } catch (const std::exception& e) {
    rec.loaded = false;
    rec.refused_reason = std::string("the scanner's answer could not be read: ") + e.what();
  }
  return false;
}

}  // namespace trainhook::detail
