// A case that ends its process (exit(), a crash, _exit) run in a forked child:
// how it ended and what it wrote to stderr. Header-only; the tests include it
// through trainhook_testkit.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

namespace trainhook::testkit {

struct ChildEnd {
  int status = -1;  // the exit status, or -1 when a signal killed it
  int signal = 0;   // the signal that killed it, or 0
  std::string err;  // what the child wrote to stderr
};

// Runs `body` in a child with stderr on a pipe; `body` must end the process
// (a child that returns from it exits 99).
inline ChildEnd run_in_child(const std::function<void()>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("run_in_child: pipe failed");
  std::fflush(nullptr);  // the child's exit() must not write the parent's buffers again
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("run_in_child: fork failed");
  if (pid == 0) {
    ::close(fds[0]);
    ::dup2(fds[1], STDERR_FILENO);
    body();
    ::_exit(99);
  }
  ::close(fds[1]);
  ChildEnd out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.err.append(buf, static_cast<size_t>(n));
  ::close(fds[0]);
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid) throw std::runtime_error("run_in_child: waitpid failed");
  if (WIFEXITED(st)) out.status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) out.signal = WTERMSIG(st);
  return out;
}

}  // namespace trainhook::testkit
