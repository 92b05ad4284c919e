// PluginExitGuard: while armed, exit()/quick_exit() ends the process with
// kPluginExitStatus and a message; disarmed, and in a forked child, exit()
// keeps its status. Each case runs in a child process (it ends the process).
#include <trainhook/plugin_host/containment/plugin_exit_guard.hpp>

#include <doctest/doctest.h>
#include <child_process.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using trainhook::kPluginExitStatus;
using trainhook::PluginExitGuard;

namespace {

using Ended = trainhook::testkit::ChildEnd;
// Runs `body` in a child with stderr on a pipe; `body` must end the process.
Ended run_child(const std::function<void()>& body) { return trainhook::testkit::run_in_child(body); }

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
