// process_snapshot (core/src/plugin_host/check/): what the footprint checks
// compare, each difference seen and named, and nothing reported when the
// process is as it was.
#include "process_snapshot.hpp"

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

namespace check = trainhook::plugin_check;

TEST_CASE("an unchanged process shows no difference") {
  const auto before = check::ProcessSnapshot::take();
  const auto now = check::ProcessSnapshot::take();
  CHECK(check::new_threads(before, now).empty());
  CHECK(check::new_children(before, now).empty());
  CHECK(check::changed_signals(before, now).empty());
  CHECK(check::changed_std_fds(before, now).empty());
  CHECK(before.cwd == now.cwd);
  CHECK(check::resident_bytes() > 0);
}

TEST_CASE("a thread started since is named, and gone once joined") {
  const auto before = check::ProcessSnapshot::take();
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  });
  const auto during = check::new_threads(before, check::ProcessSnapshot::take());
  REQUIRE(during.size() == 1);
  CHECK(during[0].find(" (") != std::string::npos);
  stop = true;
  worker.join();
  // The joined thread leaves the task list at once or within a moment.
  auto after = check::new_threads(before, check::ProcessSnapshot::take());
  for (int i = 0; i < 50 && !after.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    after = check::new_threads(before, check::ProcessSnapshot::take());
  }
  CHECK(after.empty());
}

TEST_CASE("a child process is named while it lives") {
  const auto before = check::ProcessSnapshot::take();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  const auto children = check::new_children(before, check::ProcessSnapshot::take());
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  REQUIRE(children.size() == 1);
  CHECK(children[0].rfind(std::to_string(pid) + " (", 0) == 0);
  CHECK(check::new_children(before, check::ProcessSnapshot::take()).empty());
}

TEST_CASE("a changed signal disposition is named, and the restored one is not") {
  const auto before = check::ProcessSnapshot::take();
  struct sigaction old {};
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  REQUIRE(::sigaction(SIGUSR2, &ignore, &old) == 0);
  const auto changed = check::changed_signals(before, check::ProcessSnapshot::take());
  ::sigaction(SIGUSR2, &old, nullptr);
  REQUIRE(changed.size() == 1);
  CHECK(changed[0] == "SIGUSR2");
  CHECK(check::changed_signals(before, check::ProcessSnapshot::take()).empty());
}

TEST_CASE("stdin closed or replaced is named") {
  const int saved = ::dup(STDIN_FILENO);
  REQUIRE(saved >= 0);
  const auto before = check::ProcessSnapshot::take();
  ::close(STDIN_FILENO);
  const auto closed = check::changed_std_fds(before, check::ProcessSnapshot::take());
  trainhook::testkit::TempDir dir("th_snapshot");
  const int other = ::open((dir.path / "f").c_str(), O_RDONLY | O_CREAT, 0600);  // takes fd 0
  const auto replaced = check::changed_std_fds(before, check::ProcessSnapshot::take());
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  if (other > STDIN_FILENO) ::close(other);
  REQUIRE(closed.size() == 1);
  CHECK(closed[0] == "fd 0 (stdin) closed");
  REQUIRE(replaced.size() == 1);
  CHECK(replaced[0] == "fd 0 (stdin) now points to another file");
}

TEST_CASE("files under a folder are listed relative and sorted") {
  trainhook::testkit::TempDir dir("th_snapshot");
  CHECK(check::files_under(dir.path).empty());
  std::filesystem::create_directories(dir.path / "sub");
  std::ofstream(dir.path / "sub" / "b.txt") << "x";
  std::ofstream(dir.path / "a.txt") << "x";
  CHECK(check::files_under(dir.path) == std::vector<std::string>{"a.txt", "sub", "sub/b.txt"});
}
