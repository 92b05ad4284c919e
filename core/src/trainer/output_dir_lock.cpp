#include <trainhook/trainer/output_dir_lock.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// This process's locks by folder; weak, so the last holder releases it.
std::mutex g_mutex;
std::map<std::string, std::weak_ptr<OutputDirLock>> g_held;

std::string system_error(const std::string& what, const fs::path& file) {
  return what + " " + file.string() + ": " + std::strerror(errno);
}

// The lock descriptors this process holds, for the atfork child handler (no
// lock there: the mutex may be held by the thread that did not fork). A slot
// holds fd + 1, 0 when free.
constexpr int kMaxLocks = 16;
std::atomic<int> g_lock_fds[kMaxLocks];
std::atomic<bool> g_forked_child{false};  // set in a child forked without exec

// In a child forked without exec (a plugin's helper or daemon): its copy of a
// lock descriptor would keep the lock alive after this run ends (an flock lock
// belongs to the open file description), and refuse every later run into the
// folder. Closing the copy drops the child's reference; the parent keeps its own.
void close_locks_in_child() {
  g_forked_child.store(true);
  for (auto& slot : g_lock_fds) {
    const int held = slot.exchange(0);
    if (held > 0) ::close(held - 1);
  }
}

void remember_lock_fd(int fd) {
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, close_locks_in_child); });
  for (auto& slot : g_lock_fds) {
    int free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, fd + 1)) return;
  }
  // More than kMaxLocks folders locked at once: this one is not released in
  // forked children (no run locks more than one).
}

// Whether fd was among the slots (a forked child finds it gone: the atfork
// handler closed its copy, and the number may belong to another file by now).
bool forget_lock_fd(int fd) {
  for (auto& slot : g_lock_fds) {
    int mine = fd + 1;
    if (slot.compare_exchange_strong(mine, 0)) return true;
  }
  return false;
}

struct Holder {
  std::string host;  // "?" when unknown
  long pid = -1;     // -1 when unknown
};

// "host <name>\npid <pid>\n" as the holder wrote it.
Holder read_holder(int fd) {
  Holder holder{"?", -1};
  char buf[512];
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return holder;
  buf[n] = '\0';
  const std::string text(buf);
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.rfind("host ", 0) == 0 && line.size() > 5) holder.host = line.substr(5);
    if (line.rfind("pid ", 0) == 0) {
      char* stop = nullptr;
      const long pid = std::strtol(line.c_str() + 4, &stop, 10);
      if (stop != line.c_str() + 4 && *stop == '\0' && pid > 0) holder.pid = pid;
    }
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return holder;
}

std::string this_host() {
  char host[256] = "?";
  if (::gethostname(host, sizeof host) != 0) std::strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  return host;
}

bool process_exists(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// The processes of this machine with the lock file open, as "PID <pid>
// (<command>)", found by the file's device and inode among /proc/<pid>/fd;
// processes of other users cannot be looked into and are missed. Only on the
// refusal path.
std::vector<std::pair<long, std::string>> processes_holding(int fd) {
  std::vector<std::pair<long, std::string>> found;
  struct stat lock {};
  if (::fstat(fd, &lock) != 0) return found;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return found;
  const long self = ::getpid();
  while (const dirent* entry = ::readdir(proc)) {
    char* stop = nullptr;
    const long pid = std::strtol(entry->d_name, &stop, 10);
    if (stop == entry->d_name || *stop != '\0' || pid == self) continue;
    const std::string fd_dir = "/proc/" + std::string(entry->d_name) + "/fd";
    DIR* fds = ::opendir(fd_dir.c_str());
    if (fds == nullptr) continue;
    bool holds = false;
    while (const dirent* f = ::readdir(fds)) {
      struct stat st {};
      if (f->d_name[0] == '.' || ::stat((fd_dir + "/" + f->d_name).c_str(), &st) != 0) continue;
      if (st.st_dev == lock.st_dev && st.st_ino == lock.st_ino) {
        holds = true;
        break;
      }
    }
    ::closedir(fds);
    if (!holds) continue;
    std::string command;
    std::ifstream comm("/proc/" + std::string(entry->d_name) + "/comm");
    std::getline(comm, command);
    found.emplace_back(pid, command);
  }
  ::closedir(proc);
  return found;
}

// Why the lock is refused: who holds the folder, as far as this machine can tell.
std::string refusal(const fs::path& output_dir, const fs::path& file, int fd) {
  const Holder holder = read_holder(fd);
  const std::string pid = holder.pid > 0 ? std::to_string(holder.pid) : std::string("?");
  const std::string head = "output_dir " + output_dir.string();
  const std::string way_out = "; wait for it to end, stop it, or give this run another --output_dir";
  if (holder.pid <= 0)
    return head + " is in use by another run (" +
           (holder.host == "?" ? std::string("a process that has not written its host and PID yet")
                               : "host " + holder.host + ", PID ?") +
           ", lock " + file.string() + ")" + way_out;
  if (holder.host != this_host())
    return head + " is in use by another run (host " + holder.host + ", PID " + pid + ", lock " +
           file.string() + ")" + way_out;
  const auto holders = processes_holding(fd);
  bool recorded_holds = holders.empty();  // nothing seen (other users' processes): trust the PID
  for (const auto& [p, command] : holders) recorded_holds = recorded_holds || p == holder.pid;
  if (process_exists(holder.pid) && recorded_holds)
    return head + " is in use by another run (host " + holder.host + ", PID " + pid + ", lock " +
           file.string() + ")" + way_out;
  // The run that locked the folder is gone, but the lock is not: a process
  // it started (a plugin's helper or daemon forked without exec) inherited
  // the lock's descriptor and keeps it alive.
  std::string who;
  for (const auto& [p, command] : holders)
    who += (who.empty() ? "" : ", ") + std::string("PID ") + std::to_string(p) + " (" + command + ")";
  std::string text = head + " is still locked (" + file.string() + "), but the run that locked it (host " +
                     holder.host + ", PID " + pid + ") has exited: a process it started holds the lock";
  if (!who.empty()) return text + ": " + who + "; stop that process, or give this run another --output_dir";
  return text +
         " (a plugin's helper or daemon that inherited the lock's descriptor); find it with `fuser -v " +
         file.string() + "` or `lsof " + file.string() + "`, stop it, or give this run another --output_dir";
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
      const std::string message = refusal(output_dir, file, fd);
      ::close(fd);
      throw OutputDirBusy(message);
    }
    ::close(fd);
    errno = err;
    throw std::runtime_error(system_error("cannot lock", file));
  }
  // Best effort: the lock holds without the text (a full disk, say); the
  // refusal message then says the holder is unknown.
  const std::string text = "host " + this_host() + "\npid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);
    (void)written;
  }
  remember_lock_fd(fd);
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
  if (forget_lock_fd(fd_) || !g_forked_child.load()) ::close(fd_);
}

}  // namespace trainhook
