// What the host puts back after a plugin call (ProcessStateCheck), the end of
// a forked child that returns from a plugin call (PluginCallGuard), and the
// descriptors filled at start. Each case that changes the process runs in a
// child process, so a failure cannot take the test runner's stdout or signals.
#include <trainhook/plugin_host/containment/process_containment.hpp>

#include "containment/crash_handler.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <climits>
#include <cstdio>
#include <functional>
#include <string>

using trainhook::kForkedChildStatus;
using trainhook::detail::PluginCallGuard;
using trainhook::detail::PluginCallScope;
using trainhook::detail::ProcessStateCheck;

namespace {

struct Ended {
  int status = -1;  // the exit status, or -1 when killed by a signal
  std::string err;  // what the child (and its children) wrote to stderr
};

// Runs `body` in a child with stderr on a pipe; the child's exit status is
// what `body` returns.
Ended run_child(const std::function<int()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[1]);
    ::_exit(body());
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

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

void on_term(int) {}

}  // namespace

TEST_CASE("a child forked inside a plugin call ends when the call returns, named, and the parent goes on") {
  const Ended e = run_child([] {
    trainhook::detail::watch_forks_in_plugin_calls();
    pid_t child = -1;
    {
      PluginCallScope scope("/plugins/libtrainhook_x.so", "forker", "on_step_end");  // as the host calls
      PluginCallGuard call("/plugins/libtrainhook_x.so", "forker", "on_step_end");
      child = ::fork();
      if (child < 0) return 90;
    }                           // the child ends here
    if (child == 0) return 91;  // the child came back: the guard did not end it
    int st = 0;
    if (::waitpid(child, &st, 0) != child || !WIFEXITED(st)) return 92;
    return WEXITSTATUS(st);  // the child's status, from the parent that went on
  });
  CHECK(e.status == kForkedChildStatus);
  CHECK(contains(e.err,
                 "trainhook: fatal: callback 'forker' from /plugins/libtrainhook_x.so forked a child "
                 "process (PID "));
  CHECK(contains(e.err,
                 ") during on_step_end that returned into the trainer; the child ends here with status 71 "
                 "and the run goes on in PID "));
}

TEST_CASE("a fork outside any plugin call (the host's own, or a Python host's) is left alone") {
  const Ended e = run_child([] {
    trainhook::detail::watch_forks_in_plugin_calls();
    const pid_t child = ::fork();
    if (child < 0) return 90;
    if (child == 0) {
      {
        PluginCallScope scope("/plugins/libtrainhook_x.so", "cb", "on_log");
        PluginCallGuard call("/plugins/libtrainhook_x.so", "cb", "on_log");
      }
      ::_exit(7);  // plugin calls in the child do not end it
    }
    int st = 0;
    if (::waitpid(child, &st, 0) != child || !WIFEXITED(st)) return 92;
    return WEXITSTATUS(st);
  });
  CHECK(e.status == 7);
  CHECK_FALSE(contains(e.err, "trainhook: fatal"));
}

TEST_CASE("ProcessStateCheck puts back SIGTERM and SIGINT a call ignored or took over") {
  const Ended e = run_child([] {
    struct sigaction mine {};
    mine.sa_handler = on_term;
    sigemptyset(&mine.sa_mask);
    ::sigaction(SIGTERM, &mine, nullptr);
    ::sigaction(SIGINT, &mine, nullptr);
    ProcessStateCheck check;
    ::signal(SIGTERM, SIG_IGN);  // what the plugin does
    ::signal(SIGINT, SIG_DFL);
    const auto changes = check.restore();
    struct sigaction term {
    }, intr{};
    ::sigaction(SIGTERM, nullptr, &term);
    ::sigaction(SIGINT, nullptr, &intr);
    if (term.sa_handler != on_term || intr.sa_handler != on_term) return 1;
    if (changes.size() != 2) return 2;
    if (!contains(changes[0],
                  "set the handling of SIGTERM to SIG_IGN; the host put its own back (a handler in "))
      return 3;
    if (!contains(changes[1], "set the handling of SIGINT to SIG_DFL")) return 4;
    return 0;
  });
  CHECK(e.status == 0);
}

TEST_CASE("ProcessStateCheck puts back a closed stdout and a stderr replaced by a file") {
  const Ended e = run_child([] {
    char dir[] = "/tmp/th_contain_XXXXXX";
    if (::mkdtemp(dir) == nullptr) return 90;
    const std::string file = std::string(dir) + "/data.jsonl";
    struct stat before {};
    ::fstat(STDERR_FILENO, &before);
    ProcessStateCheck check;
    ::close(STDOUT_FILENO);
    const int data = ::open(file.c_str(), O_WRONLY | O_CREAT, 0644);  // takes descriptor 1
    ::dup2(data, STDERR_FILENO);                                      // and 2 points there too
    const auto changes = check.restore();
    struct stat after {};
    ::fstat(STDERR_FILENO, &after);
    if (::write(STDERR_FILENO, "console\n", 8) != 8) return 89;
    struct stat written {};
    ::stat(file.c_str(), &written);
    ::unlink(file.c_str());
    ::rmdir(dir);
    if (::fcntl(STDOUT_FILENO, F_GETFD) == -1) return 1;
    if (after.st_ino != before.st_ino || after.st_dev != before.st_dev) return 2;
    if (written.st_size != 0) return 3;  // the console line did not go into the data file
    if (changes.size() != 2) return 4;
    if (!contains(changes[0], "pointed descriptor 1 (stdout) at " + file + "; it was put back as it was"))
      return 5;
    if (!contains(changes[1], "pointed descriptor 2 (stderr) at " + file + "; it was put back as it was"))
      return 6;
    return 0;
  });
  CHECK(e.status == 0);
  CHECK(contains(e.err, "console\n"));
}

TEST_CASE(
    "ProcessStateCheck says that a closed descriptor was put back, and reports a chdir without undoing it") {
  const Ended e = run_child([] {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return 90;
    ProcessStateCheck check;
    ::close(STDOUT_FILENO);
    if (::chdir("/") != 0) return 91;
    const auto changes = check.restore();
    char now[PATH_MAX];
    if (::getcwd(now, sizeof now) == nullptr || std::string(now) != "/") return 1;
    if (::fcntl(STDOUT_FILENO, F_GETFD) == -1) return 2;
    if (changes.size() != 2) return 3;
    if (!contains(changes[0], "closed descriptor 1 (stdout); it was put back as it was")) return 4;
    if (!contains(changes[1], "changed the working directory from " + std::string(cwd) + " to /")) return 5;
    return 0;
  });
  CHECK(e.status == 0);
}

TEST_CASE("ProcessStateCheck finds nothing to report after a call that changed nothing") {
  ProcessStateCheck check;
  CHECK(check.restore().empty());
}

TEST_CASE("reopen_closed_standard_descriptors fills closed 0-2 with /dev/null and leaves open ones") {
  const Ended e = run_child([] {
    ::close(STDIN_FILENO);
    const auto filled = trainhook::reopen_closed_standard_descriptors();
    if (filled != std::vector<int>{0}) return 1;
    struct stat in {
    }, null{};
    if (::fstat(STDIN_FILENO, &in) != 0 || ::stat("/dev/null", &null) != 0) return 2;
    if (in.st_rdev != null.st_rdev) return 3;
    if (::fcntl(STDIN_FILENO, F_GETFD) & FD_CLOEXEC) return 4;  // a standard descriptor survives exec
    return trainhook::reopen_closed_standard_descriptors().empty() ? 0 : 5;
  });
  CHECK(e.status == 0);
}

TEST_CASE("describe_signal_disposition names SIG_IGN, SIG_DFL and the file holding a handler") {
  struct sigaction sa {};
  sa.sa_handler = SIG_IGN;
  CHECK(trainhook::describe_signal_disposition(sa) == "SIG_IGN");
  sa.sa_handler = SIG_DFL;
  CHECK(trainhook::describe_signal_disposition(sa) == "SIG_DFL");
  sa.sa_handler = on_term;
  CHECK(contains(trainhook::describe_signal_disposition(sa), "a handler in "));
}

TEST_CASE("ProcessStateCheck unblocks SIGTERM a call blocked on the calling thread") {
  const Ended e = run_child([] {
    ProcessStateCheck check;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::pthread_sigmask(SIG_BLOCK, &term, nullptr);
    const auto changes = check.restore();
    sigset_t now;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
    if (sigismember(&now, SIGTERM)) return 1;
    if (changes.size() != 1 || !contains(changes[0], "blocked SIGTERM on the calling thread")) return 2;
    return 0;
  });
  CHECK(e.status == 0);
}

TEST_CASE("ProcessStateCheck puts back the umask and a lowered file size limit, and SIGXFSZ") {
  const Ended e = run_child([] {
    ::umask(022);
    struct rlimit limit {};
    if (::getrlimit(RLIMIT_FSIZE, &limit) != 0) return 90;
    const rlim_t before = limit.rlim_cur;
    trainhook::ignore_file_size_signal();
    ProcessStateCheck check;
    ::umask(0777);
    limit.rlim_cur = 4096;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 91;
    ::signal(SIGXFSZ, SIG_DFL);
    const auto changes = check.restore();
    const mode_t now = ::umask(022);
    if (now != 022) return 1;
    if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur != before) return 2;
    struct sigaction xfsz {};
    if (::sigaction(SIGXFSZ, nullptr, &xfsz) != 0 || xfsz.sa_handler != SIG_IGN) return 3;
    if (changes.size() != 3) return 4;
    if (!contains(changes[0], "set the handling of SIGXFSZ to SIG_DFL; the host put its own back (SIG_IGN)"))
      return 5;
    if (!contains(changes[1], "set the umask to 0777 (files created after it get mode 0000); the host put back 0022"))
      return 6;
    if (!contains(changes[2], "lowered the file size limit (RLIMIT_FSIZE) from ") ||
        !contains(changes[2], "to 4096 bytes; the host put it back"))
      return 7;
    return 0;
  });
  CHECK(e.status == 0);
}

TEST_CASE("after a later call, a closed stdout and a changed umask are put back and the call named") {
  const Ended e = run_child([] {
    ::dup2(STDERR_FILENO, STDOUT_FILENO);  // the warnings (spdlog's console) reach the pipe
    ::umask(022);
    trainhook::detail::remember_process_state();
    // A per-step call that changed nothing: the step-end check finds nothing.
    trainhook::detail::note_unchecked_plugin_call("/p/libtrainhook_a.so", "a", "on_step_end");
    trainhook::detail::check_process_state_at_step_end();
    // One that closes stdout and sets the umask: named at the step's end.
    ::close(STDOUT_FILENO);
    ::umask(0777);
    trainhook::detail::note_unchecked_plugin_call("/p/libtrainhook_b.so", "b", "on_step_end");
    trainhook::detail::check_process_state_at_step_end();
    if (::fcntl(STDOUT_FILENO, F_GETFD) == -1) return 1;
    if (::umask(022) != 022) return 2;
    // After a call of another event: named at once.
    ::close(STDOUT_FILENO);
    trainhook::detail::check_process_state_after("/p/libtrainhook_c.so", "c", "on_log");
    if (::fcntl(STDOUT_FILENO, F_GETFD) == -1) return 3;
    return 0;
  });
  CHECK(e.status == 0);
  CHECK(contains(e.err,
                 "callback 'b' from /p/libtrainhook_b.so in a per-step event (the last: on_step_end; checked at the "
                 "step's end): closed descriptor 1 (stdout); it was put back as it was"));
  CHECK(contains(e.err, "callback 'b' from /p/libtrainhook_b.so in a per-step event (the last: on_step_end; "
                        "checked at the step's end): set the umask to 0777"));
  CHECK(contains(e.err, "callback 'c' from /p/libtrainhook_c.so in on_log: closed descriptor 1 (stdout)"));
  CHECK(!contains(e.err, "callback 'a'"));
}
