#include "process_snapshot.hpp"

#include <trainhook/common/signal_name.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace trainhook::plugin_check {
namespace fs = std::filesystem;

namespace {

// The kernel's flag for libc's signal trampoline: libc sets it on every
// sigaction, so it says nothing about the handler.
constexpr unsigned kRestorerFlag = 0x04000000;

std::vector<pid_t> numeric_entries(const char* dir) {
  std::vector<pid_t> out;
  DIR* d = ::opendir(dir);
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long v = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.push_back(static_cast<pid_t>(v));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The parent pid from /proc/<pid>/stat (the field after the command's ')').
pid_t parent_of(pid_t pid) {
  const std::string stat = first_line("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  char state = 0;
  int ppid = -1;
  if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

template <class F>
std::vector<std::string> added(const std::vector<pid_t>& before, const std::vector<pid_t>& now, F describe) {
  std::vector<std::string> out;
  for (pid_t p : now)
    if (!std::binary_search(before.begin(), before.end(), p)) out.push_back(describe(p));
  return out;
}

}  // namespace

ProcessSnapshot ProcessSnapshot::take() {
  ProcessSnapshot s;
  static_cast<ProcessSettings&>(s) = ProcessSettings::take();
  s.threads = numeric_entries("/proc/self/task");
  const pid_t self = ::getpid();
  for (pid_t p : numeric_entries("/proc"))
    if (p != self && parent_of(p) == self) s.children.push_back(p);
  return s;
}

ProcessSettings ProcessSettings::take() {
  ProcessSettings s;
  s.handlers.reserve(31);
  for (int sig = 1; sig < 32; ++sig) {
    struct sigaction sa {};
    if (sig == SIGKILL || sig == SIGSTOP || ::sigaction(sig, nullptr, &sa) != 0) {
      s.handlers.emplace_back();
      continue;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%p/%x", reinterpret_cast<void*>(sa.sa_handler),
                  static_cast<unsigned>(sa.sa_flags) & ~kRestorerFlag);
    s.handlers.emplace_back(buf);
  }
  for (int fd = 0; fd < 3; ++fd) {
    struct stat st {};
    if (::fcntl(fd, F_GETFD) < 0 || ::fstat(fd, &st) != 0)
      s.std_fds.emplace_back("closed");
    else
      s.std_fds.push_back(std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino));
  }
  char cwd[4096];
  s.cwd = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "(unreadable)";
  return s;
}

std::vector<std::string> new_threads(const ProcessSnapshot& before, const ProcessSnapshot& now) {
  return added(before.threads, now.threads, [](pid_t tid) {
    const std::string name = first_line("/proc/self/task/" + std::to_string(tid) + "/comm");
    return (name.empty() ? "?" : name) + " (" + std::to_string(tid) + ")";
  });
}

std::vector<std::string> new_children(const ProcessSnapshot& before, const ProcessSnapshot& now) {
  return added(before.children, now.children, [](pid_t pid) {
    const std::string name = first_line("/proc/" + std::to_string(pid) + "/comm");
    return std::to_string(pid) + " (" + (name.empty() ? "?" : name) + ")";
  });
}

std::vector<std::string> changed_signals(const ProcessSettings& before, const ProcessSettings& now) {
  std::vector<std::string> out;
  for (size_t i = 0; i < before.handlers.size() && i < now.handlers.size(); ++i)
    if (before.handlers[i] != now.handlers[i]) out.push_back(signal_name(static_cast<int>(i) + 1));
  return out;
}

std::vector<std::string> changed_std_fds(const ProcessSettings& before, const ProcessSettings& now) {
  static const char* names[] = {"stdin", "stdout", "stderr"};
  std::vector<std::string> out;
  for (size_t fd = 0; fd < 3 && fd < before.std_fds.size() && fd < now.std_fds.size(); ++fd) {
    if (before.std_fds[fd] == now.std_fds[fd]) continue;
    out.push_back("fd " + std::to_string(fd) + " (" + names[fd] + ") " +
                  (now.std_fds[fd] == "closed" ? "closed" : "now points to another file"));
  }
  return out;
}

int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return 0;
  return resident * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(fs::relative(it->path(), dir, ec).string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainhook::plugin_check
