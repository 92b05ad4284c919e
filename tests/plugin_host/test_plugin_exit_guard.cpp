// PluginExitGuard: while armed, exit()/quick_exit() ends the process with
// kPluginExitStatus and a message; disarmed, and in a forked child, exit()
// keeps its status. Each case runs in a child process (it ends the process).
#include <trainhook/plugin_host/plugin_exit_guard.hpp>

#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using trainhook::kPluginExitStatus;
using trainhook::PluginExitGuard;

namespace {

struct Ended {
  int status = -1;  // the exit status, or -1 when killed by a signal
  std::string err;  // what the child wrote to stderr
};

// Runs `body` in a child with stderr on a pipe; `body` must end the process.
Ended run_child(const std::function<void()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(nullptr);  // the child's exit() must not write the parent's buffers again
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    body();
    ::_exit(99);  // body did not end the process
  }
  ::close(fds[1]);
  Ended out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.err.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int st = 0;
  REQUIRE(::waitpid(pid, &st, 0) == pid);
  if (WIFEXITED(st)) out.status = WEXITSTATUS(st);
  return out;
}

}  // namespace

TEST_CASE("exit(0) while armed ends with the plugin-exit status and says so") {
  const Ended e = run_child([] {
    PluginExitGuard guard;
    std::exit(0);
  });
  CHECK(e.status == kPluginExitStatus);
  CHECK(e.err.find("trainhook: fatal: exit() was called outside any callback call") != std::string::npos);
  CHECK(e.err.find("exit status 70\n") != std::string::npos);
}

TEST_CASE("quick_exit(0) while armed too") {
  const Ended e = run_child([] {
    PluginExitGuard guard;
    std::quick_exit(0);
  });
  CHECK(e.status == kPluginExitStatus);
  CHECK(e.err.find("trainhook: fatal: quick_exit() was called") != std::string::npos);
}

TEST_CASE("guards nest: armed until the last one is gone") {
  const Ended armed = run_child([] {
    PluginExitGuard outer;
    { PluginExitGuard inner; }
    std::exit(0);
  });
  CHECK(armed.status == kPluginExitStatus);
  const Ended disarmed = run_child([] {
    { PluginExitGuard guard; }
    std::exit(5);  // the trainer's own exit after the run: unchanged
  });
  CHECK(disarmed.status == 5);
  CHECK(disarmed.err.empty());
}

TEST_CASE("a child forked while armed ends with its own status") {
  const Ended e = run_child([] {
    PluginExitGuard guard;
    const pid_t child = ::fork();
    if (child == 0) std::exit(4);
    int st = 0;
    ::waitpid(child, &st, 0);
    ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 98);
  });
  CHECK(e.status == 4);
  CHECK(e.err.empty());
}
