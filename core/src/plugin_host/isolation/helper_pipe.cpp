#include "helper_pipe.hpp"

#include <trainhook/common/errors.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainhook::detail {

HelperPipe::HelperPipe(const char* purpose) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw PluginError(std::string("cannot create a pipe for ") + purpose + ": " + std::strerror(errno));
  read = fds[0];
  write = fds[1];
  ::fcntl(read, F_SETFL, ::fcntl(read, F_GETFL) | O_NONBLOCK);
}

HelperPipe::~HelperPipe() {
  close_read();
  close_write();
}

void HelperPipe::close_read() {
  if (read >= 0) ::close(read);
  read = -1;
}

void HelperPipe::close_write() {
  if (write >= 0) ::close(write);
  write = -1;
}

bool drain_pipe(int fd, std::string& out, size_t keep, bool keep_tail) {
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

bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace trainhook::detail
