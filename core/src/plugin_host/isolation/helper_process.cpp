#include "helper_process.hpp"

#include <trainhook/common/errors.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <memory>

extern char** environ;

namespace trainhook::detail {
namespace {

using Clock = std::chrono::steady_clock;

// Both ends close-on-exec (the child's end is dup2'ed to a fixed number by the
// spawn); the read end does not block.
struct Pipe {
  explicit Pipe(const char* purpose) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      throw PluginError(std::string("cannot create a pipe for ") + purpose + ": " + ::strerror(errno));
    read = fds[0];
    write = fds[1];
    ::fcntl(read, F_SETFL, ::fcntl(read, F_GETFL) | O_NONBLOCK);
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  int read = -1;
  int write = -1;
};

// Reads what is available on fd into out, keeping at most `keep` bytes: the
// first ones (an answer) or, with keep_tail, the last ones (printed output).
// False at end of file or on an error.
bool drain(int fd, std::string& out, size_t keep, bool keep_tail) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() <= keep) continue;
    if (keep_tail)
      out.erase(0, out.size() - keep);
    else
      out.resize(keep);
  }
}

// Whether `pid` has exited, without reaping it: its process group id stays
// taken until waitpid, so kill(-pid) cannot reach a stranger.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

// A descriptor that becomes readable when `pid` exits (Linux 5.3+), or -1:
// then the wait checks with waitid every kExitCheckMs instead.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}
constexpr int64_t kExitCheckMs = 20;

// `input`: the read end of a pipe holding call.input (its write end closed), or null.
pid_t spawn(const HelperCall& call, const Pipe& result, const Pipe& output, const Pipe* input) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, output.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, output.write, STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, result.write, call.result_fd);
  if (input != nullptr)
    posix_spawn_file_actions_adddup2(&actions, input->read, STDIN_FILENO);
  else
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Signals the caller ignores or blocks are back at their defaults in the
  // helper: what it observes of the library is the library's own doing.
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig = 1; sig < 32; ++sig)
    if (sig != SIGKILL && sig != SIGSTOP) sigaddset(&defaults, sig);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  // A process group of its own (pgid = its pid): whatever the library forks
  // joins it, and kill(-pid) ends them all. (A Ctrl-C then reaches only the
  // caller; the helpers end themselves when their parent is gone.)
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  for (const auto& a : call.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0)
    throw PluginError("cannot start " + std::string(call.purpose) + " " + call.argv[0] + ": " +
                      ::strerror(rc));
  return pid;
}

}  // namespace

HelperRun run_helper(const HelperCall& call) {
  Pipe result(call.purpose);
  Pipe output(call.purpose);
  std::unique_ptr<Pipe> input;
  if (!call.input.empty()) {
    if (call.input.size() > PIPE_BUF)
      throw PluginError(std::string("the input of ") + call.purpose + " is over PIPE_BUF bytes");
    // Written whole before the helper starts (it fits the pipe), then end of file.
    input = std::make_unique<Pipe>(call.purpose);
    if (::write(input->write, call.input.data(), call.input.size()) !=
        static_cast<ssize_t>(call.input.size()))
      throw PluginError(std::string("cannot write the input of ") + call.purpose + ": " + ::strerror(errno));
    input->close_write();
  }
  const pid_t pid = spawn(call, result, output, input.get());
  input.reset();
  result.close_write();
  output.close_write();

  HelperRun run;
  const int pidfd = open_pidfd(pid);
  bool result_open = true;
  bool output_open = true;
  bool exited = false;
  int wait_error = 0;
  auto answered = [&] { return call.one_line_answer && run.answer.find('\n') != std::string::npos; };
  const auto deadline = Clock::now() + call.limit;
  while (!exited && !answered()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      run.timed_out = true;
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
      result_open = drain(result.read, run.answer, call.max_answer, false);
    if (output_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0)
      output_open = drain(output.read, run.output, call.output_tail, true);
    exited = pidfd >= 0 ? (fds[2].revents & POLLIN) != 0 : has_exited(pid);
  }
  // The whole group, while the helper is not yet reaped (so its pid, the
  // group's id, cannot have been reused): the helper if it hangs or has not
  // quite exited after answering, and every process the library started.
  ::kill(-pid, SIGKILL);
  while (::waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  if (pidfd >= 0) ::close(pidfd);
  // What the helper wrote before it exited is in the pipes now.
  if (result_open) drain(result.read, run.answer, call.max_answer, false);
  if (output_open) drain(output.read, run.output, call.output_tail, true);
  if (wait_error != 0)
    throw PluginError(std::string("waiting for ") + call.purpose + ": " + ::strerror(wait_error));
  return run;
}

}  // namespace trainhook::detail
