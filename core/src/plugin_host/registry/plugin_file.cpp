#include "plugin_file.hpp"

#include "plugin_file_checks.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <sstream>

namespace trainhook::detail {

namespace {

int64_t nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

FileIdentity FileIdentity::of(const struct stat& st) {
  FileIdentity id;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.ino = static_cast<uint64_t>(st.st_ino);
  id.size = static_cast<int64_t>(st.st_size);
  id.mtime_ns = nanoseconds(st.st_mtim);
  id.ctime_ns = nanoseconds(st.st_ctim);
  return id;
}

std::string FileIdentity::to_text() const {
  return std::to_string(dev) + ":" + std::to_string(ino) + ":" + std::to_string(size) + ":" +
         std::to_string(mtime_ns) + ":" + std::to_string(ctime_ns);
}

std::optional<FileIdentity> FileIdentity::parse(const std::string& text) {
  std::istringstream in(text);
  FileIdentity id;
  char c1 = 0, c2 = 0, c3 = 0, c4 = 0;
  if (!(in >> id.dev >> c1 >> id.ino >> c2 >> id.size >> c3 >> id.mtime_ns >> c4 >> id.ctime_ns) ||
      c1 != ':' || c2 != ':' || c3 != ':' || c4 != ':' || in.peek() != std::char_traits<char>::eof())
    return std::nullopt;
  return id;
}

PluginFile::PluginFile(std::filesystem::path path) : path_(std::move(path)) {
  // O_NONBLOCK: a FIFO put there does not hang the run; only a regular file is used.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd_ < 0) {
    problem_ = "cannot be opened (" + std::string(std::strerror(errno)) + ")";
    return;
  }
  if (::fstat(fd_, &st_) != 0 || !S_ISREG(st_.st_mode)) {
    problem_ = S_ISREG(st_.st_mode) ? "cannot be inspected (fstat failed)" : "is not a regular file";
    ::close(fd_);
    fd_ = -1;
  }
}

PluginFile::PluginFile(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {
  if (::fstat(fd_, &st_) != 0 || !S_ISREG(st_.st_mode)) {
    problem_ = "the descriptor passed for it is not a regular file";
    ::close(fd_);
    fd_ = -1;
  }
}

PluginFile::~PluginFile() {
  if (fd_ >= 0 && !keep_) ::close(fd_);
}

std::string PluginFile::changed_since_opened() const {
  struct stat now {};
  if (::fstat(fd_, &now) != 0) return "plugin file " + path_.string() + " cannot be inspected any more";
  const FileIdentity was = identity(), is = FileIdentity::of(now);
  // Renaming another file over the path unlinks this one, which moves its
  // ctime (and its link count) without touching its bytes; a write moves the
  // ctime even when the mtime is set back (cp -p, rsync --inplace).
  const bool unlinked = now.st_nlink != st_.st_nlink;
  if (was.size == is.size && was.mtime_ns == is.mtime_ns && (was.ctime_ns == is.ctime_ns || unlinked))
    return {};
  return "plugin file " + path_.string() + " was written to while it was checked (size " +
         std::to_string(was.size) + " -> " + std::to_string(is.size) + " bytes, modified " +
         (was.mtime_ns == is.mtime_ns ? "no" : "yes") + ", status changed " +
         (was.ctime_ns == is.ctime_ns ? "no" : "yes") + ")";
}

std::string PluginFile::proc_path() const { return "/proc/self/fd/" + std::to_string(fd_); }

std::string PluginFile::load_origin_dependencies() const {
  for (const std::filesystem::path& dep : origin_dependencies(proc_path(), path_)) {
    (void)::dlerror();  // clear a stale message, so the one read below is this load's
    if (::dlopen(dep.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) == nullptr) {
      const char* why = ::dlerror();
      return "its dependency " + dep.string() +
             " (which its RUNPATH finds through $ORIGIN) cannot be loaded: " +
             (why != nullptr ? why : "no loader message");
    }
  }
  return {};
}

}  // namespace trainhook::detail
