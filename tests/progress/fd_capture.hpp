// Test helpers that collect what is written to a file descriptor: a pipe
// drained by a thread (so a writer never blocks on a full pipe), optionally
// put in place of an existing fd (stdout/stderr) with dup2 and restored after.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace fd_capture {

class Pipe {
 public:
  // replace_fd >= 0: dup2 the pipe's write end over it until finish().
  explicit Pipe(int replace_fd = -1) : replaced_(replace_fd) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    read_fd_ = fds[0];
    write_fd_ = fds[1];
    if (replaced_ >= 0) {
      saved_ = ::dup(replaced_);
      ::dup2(write_fd_, replaced_);
    }
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(read_fd_, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard<std::mutex> lock(mu_);
        text_.append(buf, static_cast<size_t>(n));
      }
    });
  }
  ~Pipe() { finish(); }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;

  int write_fd() const noexcept { return write_fd_; }
  // Restores the replaced fd, closes the write end, waits for the reader; returns all text.
  std::string finish() {
    if (!finished_) {
      finished_ = true;
      if (replaced_ >= 0) {
        ::dup2(saved_, replaced_);
        ::close(saved_);
      }
      ::close(write_fd_);
      reader_.join();
      ::close(read_fd_);
    }
    std::lock_guard<std::mutex> lock(mu_);
    return text_;
  }

 private:
  int replaced_;
  int saved_ = -1;
  int read_fd_ = -1;
  int write_fd_ = -1;
  bool finished_ = false;
  std::thread reader_;
  std::mutex mu_;
  std::string text_;
};

// True when text has no control character other than '\n'.
inline bool plain_text(const std::string& text) {
  for (char c : text)
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) return false;
  return true;
}

}  // namespace fd_capture
