// A plugin library file opened once (O_RDONLY | O_CLOEXEC). Whatever judges
// a library (its owner and mode, its SHA-256, the registry cache's key, the
// plugin lock, the scanner's verdict) judges this descriptor, and the loader
// loads this descriptor (dlopen("/proc/self/fd/N"), plugin_loader.hpp): a
// file put at the path meanwhile (mv, a package upgrade, rsync) is never what
// runs. Owned by the registry; the scanner and the plugin runner use it too.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace trainhook::detail {

// What tells one version of a file from another without reading it: the
// inode, and its size, modification and status-change times (no user-space
// tool sets the ctime back, so a write in place changes it). Crosses to a
// helper process as text (to_text / parse).
struct FileIdentity {
  uint64_t dev = 0;
  uint64_t ino = 0;
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  static FileIdentity of(const struct stat& st);
  std::string to_text() const;  // "dev:ino:size:mtime_ns:ctime_ns"
  static std::optional<FileIdentity> parse(const std::string& text);
  bool operator==(const FileIdentity& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns;
  }
  bool operator!=(const FileIdentity& o) const { return !(*this == o); }
};

class PluginFile {
 public:
  // Opens `path` (shown in messages) and fstat()s the descriptor. On failure
  // the file is not open and problem() says why.
  explicit PluginFile(std::filesystem::path path);
  // Takes over `fd`, already open on `path` (a descriptor another process passed).
  PluginFile(std::filesystem::path path, int fd);
  ~PluginFile();
  PluginFile(const PluginFile&) = delete;
  PluginFile& operator=(const PluginFile&) = delete;

  bool is_open() const noexcept { return fd_ >= 0; }
  const std::string& problem() const noexcept { return problem_; }
  const std::filesystem::path& path() const noexcept { return path_; }
  int fd() const noexcept { return fd_; }
  // What fstat() said when the file was opened.
  const struct stat& opened_stat() const noexcept { return st_; }
  FileIdentity identity() const { return FileIdentity::of(st_); }
  // "" while the descriptor's file is still the version it was when opened
  // (size, mtime, and ctime unless the file was unlinked meanwhile, which
  // moves it: renamed over); else what changed, naming the file.
  std::string changed_since_opened() const;
  // "/proc/self/fd/N": opens (and dlopen loads) the very file behind the
  // descriptor, whatever the path names by now.
  std::string proc_path() const;
  // Loads, by their paths (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE, never
  // closed), the libraries it needs that its RUNPATH finds through $ORIGIN
  // (origin_dependencies, plugin_file_checks.hpp): loaded through proc_path(),
  // its folder is /proc/self/fd to the dynamic loader, which then finds them
  // among the loaded objects by their SONAME instead. Their own dependencies
  // are found by their own RUNPATH. Whoever judges this file judges them too
  // (unsafe_dependency_reason). "" when done; else the loader's reason,
  // naming the dependency. Call it before dlopen(proc_path()).
  std::string load_origin_dependencies() const;
  // Keeps the descriptor open until the process ends: a library loaded
  // through proc_path() is known to the dynamic loader by that name, which
  // must never come to name another file (the loader would hand back the
  // library loaded first). Plugin libraries stay mapped anyway (RTLD_NODELETE).
  void keep_open_for_process() noexcept { keep_ = true; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  struct stat st_ {};
  std::string problem_;
  bool keep_ = false;
};

}  // namespace trainhook::detail
