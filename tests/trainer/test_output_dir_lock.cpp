// OutputDirLock: one writer per output_dir. Another holder is simulated by a
// flock on a second descriptor of the lock file (which conflicts with any
// other descriptor, also in the same process).
#include <trainhook/trainer/output_dir_lock.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fstream>
#include <functional>
#include <sstream>

using namespace trainhook;
namespace fs = std::filesystem;
using trainhook::testkit::read_file;
using trainhook::testkit::TempDir;

namespace {

// Another holder: a locked descriptor with its own host and PID text.
struct OtherHolder {
  explicit OtherHolder(const fs::path& file, const std::string& text) {
    fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    REQUIRE(::ftruncate(fd, 0) == 0);
    REQUIRE(::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()));
  }
  ~OtherHolder() { ::close(fd); }
  int fd = -1;
};

bool lockable(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

TEST_CASE("the lock creates output_dir and names this host and process") {
  TempDir tmp("th_lock");
  const fs::path out = tmp.path / "a" / "out";
  auto lock = OutputDirLock::acquire(out);
  REQUIRE(lock);
  CHECK(lock->file() == out / kOutputDirLockFile);
  const std::string text = read_file(out / kOutputDirLockFile);
  CHECK(text.rfind("host ", 0) == 0);
  CHECK(text.find("\npid " + std::to_string(::getpid()) + "\n") != std::string::npos);
  CHECK_FALSE(lockable(lock->file()));  // held
  lock.reset();
  CHECK(lockable(out / kOutputDirLockFile));    // released by the last holder
  CHECK(fs::exists(out / kOutputDirLockFile));  // the file stays (see the header)
}

TEST_CASE("a second acquire in the same process shares the lock") {
  TempDir tmp("th_lock");
  auto first = OutputDirLock::acquire(tmp.path);
  auto second = OutputDirLock::acquire(tmp.path / "." / "");
  CHECK(first.get() == second.get());
  first.reset();
  CHECK_FALSE(lockable(tmp.path / kOutputDirLockFile));  // `second` still holds it
  second.reset();
  CHECK(lockable(tmp.path / kOutputDirLockFile));
}

TEST_CASE("another holder is refused, naming its host and PID") {
  TempDir tmp("th_lock");
  {
    OtherHolder other(tmp.path / kOutputDirLockFile, "host node-7\npid 4242\n");
    try {
      (void)OutputDirLock::acquire(tmp.path);
      FAIL("acquired a held lock");
    } catch (const OutputDirBusy& e) {
      const std::string what = e.what();
      CHECK(what.find("output_dir " + tmp.path.string() +
                      " is in use by another run (host node-7, PID 4242") != std::string::npos);
    }
  }
  // The holder is gone (as when killed): the next run takes the folder.
  auto lock = OutputDirLock::acquire(tmp.path);
  CHECK(read_file(lock->file()).find("pid " + std::to_string(::getpid())) != std::string::npos);
}

TEST_CASE("a holder that has not written its name yet") {
  TempDir tmp("th_lock");
  OtherHolder other(tmp.path / kOutputDirLockFile, "");
  CHECK_THROWS_WITH_AS((void)OutputDirLock::acquire(tmp.path),
                       doctest::Contains("a process that has not written its host and PID yet"),
                       OutputDirBusy);
}

TEST_CASE("only runs that train take the lock") {
  CHECK(output_dir_read_only(false, true, false));
  CHECK(output_dir_read_only(false, false, true));
  CHECK_FALSE(output_dir_read_only(true, true, true));
  // An embedder that sets no task flag writes (train() is a writer).
  CHECK_FALSE(output_dir_read_only(false, false, false));
}

namespace {

// A child process (a daemon a plugin forked, say) that runs `in_child` once
// fork() has returned in it (so after the atfork child handlers), then stays
// until end() or the end of the test; the constructor returns once it is there.
class Lingering {
 public:
  explicit Lingering(const std::function<bool()>& in_child) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    int release[2];
    REQUIRE(::pipe(release) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(release[1]);
      if (!in_child() || ::write(ready[1], "x", 1) != 1) ::_exit(1);
      char c;
      while (::read(release[0], &c, 1) > 0) {
      }
      ::_exit(0);
    }
    ::close(ready[1]);
    ::close(release[0]);
    release_ = release[1];
    char c;
    const bool there = ::read(ready[0], &c, 1) == 1;
    ::close(ready[0]);
    REQUIRE(there);
  }
  ~Lingering() { end(); }
  Lingering(const Lingering&) = delete;
  Lingering& operator=(const Lingering&) = delete;
  pid_t pid() const { return pid_; }
  void end() {
    if (release_ >= 0) ::close(release_);
    release_ = -1;
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
  int release_ = -1;
};

pid_t a_finished_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

}  // namespace

TEST_CASE("a child forked while the lock is held does not keep the folder locked after the holder") {
  TempDir tmp("th_lock");
  auto lock = OutputDirLock::acquire(tmp.path);
  Lingering daemon([] { return true; });  // a plugin's daemon: it never returns to the trainer
  lock.reset();                           // the run ends; its daemon lives on
  CHECK(lockable(tmp.path / kOutputDirLockFile));
}

TEST_CASE("a lock held on after its run exited names the process that holds it") {
  TempDir tmp("th_lock");
  char host[256] = "?";
  REQUIRE(::gethostname(host, sizeof host) == 0);
  const fs::path file = tmp.path / kOutputDirLockFile;
  const std::string gone = std::to_string(a_finished_pid());
  // What a daemon of the exited run would be (made past the atfork handlers): it holds the lock.
  Lingering daemon([&] {
    const std::string text = "host " + std::string(host) + "\npid " + gone + "\n";
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT, 0644);
    return fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
           ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
  });
  try {
    (void)OutputDirLock::acquire(tmp.path);
    FAIL("acquired a held lock");
  } catch (const OutputDirBusy& e) {
    const std::string what = e.what();
    CHECK(what.find("output_dir " + tmp.path.string() + " is still locked (" + file.string() +
                    "), but the run that locked it (host " + host + ", PID " + gone +
                    ") has exited: a process it started holds the lock: PID " + std::to_string(daemon.pid()) +
                    " (") != std::string::npos);
    CHECK(what.find("; stop that process, or give this run another --output_dir") != std::string::npos);
  }
  daemon.end();
  CHECK_NOTHROW((void)OutputDirLock::acquire(tmp.path));
}
