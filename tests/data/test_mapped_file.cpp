// The read-only file mapping: contents, empty files, errors naming the file,
// released pages read back the same, and a file that shrinks while mapped.
#include <trainhook/common/mapped_region_faults.hpp>
#include <trainhook/data/mapped_file.hpp>

#include "npy_writer.hpp"

#include <doctest/doctest.h>
#include <sanitizer.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <utility>

using namespace trainhook;
using namespace trainhook::test;

TEST_CASE("a mapped file shows its bytes and reads them back after release") {
  std::string text(3 * 4096 + 5, 'a');
  text[4096] = 'b';
  const auto p = write_bytes(scratch("m.bin"), text);
  const auto m = map_file(p);
  REQUIRE(m->size() == text.size());
  CHECK(std::memcmp(m->data(), text.data(), text.size()) == 0);
  m->release_pages();
  CHECK(m->data()[4096] == 'b');
  CHECK(m->name() == p.string());
  const auto empty = map_file(write_bytes(scratch("empty.bin"), ""));
  CHECK(empty->size() == 0);
  CHECK(empty->data() == nullptr);
}

TEST_CASE("a missing file or a folder is named") {
  const auto missing = scratch("none.bin");
  const std::string expected = missing.string() + ": cannot open";
  CHECK_THROWS_WITH_AS(map_file(missing), doctest::Contains(expected.c_str()), std::runtime_error);
  CHECK_THROWS_WITH_AS(map_file(missing.parent_path()), doctest::Contains("not a regular file"),
                       std::runtime_error);
}

// Runs `body` in a forked child whose stderr is captured; returns the child's
// exit status (-signal when killed) and its stderr. Bounded: a child that has
// not ended within 30 s is killed.
static std::pair<int, std::string> run_in_child(const std::function<void()>& body) {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(pipe_fds[1], 2);
    ::close(pipe_fds[0]);
    body();
    ::_exit(99);
  }
  ::close(pipe_fds[1]);
  std::string err;
  char buf[4096];
  pollfd pfd{pipe_fds[0], POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::poll(&pfd, 1, 1000) <= 0) continue;
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n <= 0) break;  // the child's stderr closed: it ended
    err.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status), err};
}

TEST_CASE("a mapped file that shrinks under the reader is named, not a bare bus error") {
  const auto p = write_bytes(scratch("shrinks.bin"), std::string(4 * 4096, 'x'));
  const auto error_file = scratch("shrinks_error.json");
  std::filesystem::remove(error_file);
  const auto [status, err] = run_in_child([&] {
    ::setenv("TORCHELASTIC_ERROR_FILE", error_file.c_str(), 1);
    const auto m = map_file(p);
    std::filesystem::resize_file(p, 4096);
    volatile char c = m->data()[3 * 4096 + 7];  // past the new end: SIGBUS
    (void)c;
  });
  CHECK(status == kMappedFileChangedStatus);
  const std::string expected = "trainhook: fatal: data file " + p.string() +
                               " changed while the run had it mapped: it was 16384 bytes when opened and is "
                               "4096 bytes now; reading byte 12295 found no data (SIGBUS)";
  CHECK_MESSAGE(err.find(expected) != std::string::npos, err);
  std::ifstream in(error_file);
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(doc.rfind("{\"message\": {\"message\": \"data file " + p.string(), 0) == 0);
  CHECK(doc.find("\"timestamp\": \"") != std::string::npos);
}

// AddressSanitizer's own SIGBUS handler ends the process with status 1 first.
TEST_CASE("a bus error outside any mapped data file still ends the process by the signal" *
          doctest::skip(trainhook::testkit::kUnderAddressSanitizer)) {
  // Named here: the child ends by the signal, so the folder must be this process's to remove.
  const auto other = scratch("other.bin");
  const auto [status, err] = run_in_child([&] {
    (void)map_file(write_bytes(other, std::string(4096, 'y')));  // installs the handler
    ::raise(SIGBUS);
  });
  CHECK(status == -SIGBUS);
  CHECK(err.find("changed while the run had it mapped") == std::string::npos);
}
