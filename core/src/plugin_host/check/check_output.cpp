#include "check_output.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace trainhook::plugin_check {
namespace {

constexpr int kResultFd = 3;
constexpr size_t kMaxToken = 128;

// Kept only here, in the helper's memory; the command keeps its own copy.
std::string token;

void write_line(const nlohmann::json& record) {
  // A plugin's text may be any bytes: replace what is not UTF-8 rather than throw.
  const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(kResultFd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::warn:
      return "WARN";
    case Verdict::fail:
      return "FAIL";
    case Verdict::skip:
      return "SKIP";
  }
  return "FAIL";
}

}  // namespace

bool take_token() {
  char buf[kMaxToken];
  size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return false;
    if (n <= 0 || (got += static_cast<size_t>(n)) == sizeof buf) break;
  }
  token.assign(buf, got);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) return false;
  const bool ok = ::dup2(null, STDIN_FILENO) == STDIN_FILENO;
  ::close(null);
  return ok;
}

void report(const std::string& check, Verdict verdict, const std::string& detail) {
  try {
    write_line({{"token", token}, {"check", check}, {"verdict", verdict_name(verdict)}, {"detail", detail}});
  } catch (...) {
  }
}

void end_group() {
  std::fflush(stdout);
  std::fflush(stderr);
  try {
    write_line({{"token", token}, {"end", true}});
  } catch (...) {
  }
  ::_exit(0);
}

void Progress::open(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + file + ": " + std::strerror(errno));
  if (::ftruncate(fd, kProgressSize) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot size " + file + ": " + std::strerror(errno));
  }
  void* p = ::mmap(nullptr, kProgressSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map " + file + ": " + std::strerror(errno));
  page_ = static_cast<char*>(p);
  page_[0] = '0';
  page_[1] = '\0';
}

void Progress::enter(const char* callback, const char* event, int64_t step) noexcept {
  if (page_ == nullptr) return;
  page_[0] = '1';
  std::snprintf(page_ + 1, kProgressSize - 1, "%s%s%s.%s at step %lld", phase_.c_str(),
                phase_.empty() ? "" : ": ", callback, event, static_cast<long long>(step));
}

void Progress::done() noexcept {
  if (page_ != nullptr) page_[0] = '0';
}

}  // namespace trainhook::plugin_check
