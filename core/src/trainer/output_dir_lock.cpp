#include <trainhook/trainer/output_dir_lock.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// This process's locks by folder; weak, so the last holder releases it.
std::mutex g_mutex;
std::map<std::string, std::weak_ptr<OutputDirLock>> g_held;

std::string system_error(const std::string& what, const fs::path& file) {
  return what + " " + file.string() + ": " + std::strerror(errno);
}

// "host <name>\npid <pid>\n" as the holder wrote it, as "host H, PID P".
std::string describe_holder(int fd) {
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "a process that has not written its host and PID yet";
  buf[n] = '\0';
  std::string host, pid;
  const std::string text(buf);
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind("host ", 0) == 0) host = line.substr(5);
    if (line.rfind("pid ", 0) == 0) pid = line.substr(4);
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "host " + (host.empty() ? std::string("?") : host) + ", PID " +
         (pid.empty() ? std::string("?") : pid);
}

}  // namespace

std::shared_ptr<OutputDirLock> OutputDirLock::acquire(const fs::path& output_dir) {
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (ec) throw std::runtime_error("cannot create output_dir " + output_dir.string() + ": " + ec.message());
  // The folder's identity, whatever path (relative, symlinked) names it.
  struct stat st {};
  if (::stat(output_dir.c_str(), &st) != 0) throw std::runtime_error(system_error("cannot stat", output_dir));
  const std::string key = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  std::lock_guard<std::mutex> lock(g_mutex);
  if (auto held = g_held[key].lock()) return held;

  const fs::path file = output_dir / kOutputDirLockFile;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(system_error("cannot open the lock file", file));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string holder = describe_holder(fd);
      ::close(fd);
      throw OutputDirBusy("output_dir " + output_dir.string() + " is in use by another run (" + holder +
                          ", lock " + file.string() +
                          "); wait for it to end, stop it, or give this run another --output_dir");
    }
    ::close(fd);
    errno = err;
    throw std::runtime_error(system_error("cannot lock", file));
  }
  // Best effort: the lock holds without the text (a full disk, say); the
  // refusal message then says the holder is unknown.
  char host[256] = "?";
  if (::gethostname(host, sizeof host) != 0) std::strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  const std::string text = "host " + std::string(host) + "\npid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);
    (void)written;
  }
  std::shared_ptr<OutputDirLock> made(new OutputDirLock(fd, file, key));
  g_held[key] = made;
  return made;
}

OutputDirLock::OutputDirLock(int fd, fs::path file, std::string key)
    : fd_(fd), file_(std::move(file)), key_(std::move(key)) {}

OutputDirLock::~OutputDirLock() {
  std::lock_guard<std::mutex> lock(g_mutex);
  const auto it = g_held.find(key_);
  if (it != g_held.end() && it->second.expired()) g_held.erase(it);
  ::close(fd_);
}

}  // namespace trainhook
