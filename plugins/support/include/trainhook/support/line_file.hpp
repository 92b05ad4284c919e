// Files written a line at a time by a plugin's worker thread (the jsonl and
// csv loggers): an append-only file where every line reaches the kernel with
// one write(2) as soon as it is written (a process killed by SIGKILL leaves
// only whole lines behind), and the atomic replacement of a whole file
// (temporary file in the same folder, fsync, rename) for rewrites.
//
// Errors are std::system_error naming the file and what failed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace trainhook::support {

class AppendFile {
 public:
  AppendFile() = default;
  // Opens (creating it, and its folder, when missing) for appending.
  explicit AppendFile(const std::filesystem::path& path);
  ~AppendFile();
  AppendFile(AppendFile&& other) noexcept;
  AppendFile& operator=(AppendFile&& other) noexcept;
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  bool is_open() const noexcept { return fd_ >= 0; }
  const std::filesystem::path& path() const noexcept { return path_; }
  // Appends `line` and a newline with a single write (retried on a short write).
  void write_line(const std::string& line);
  void close() noexcept;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// Replaces `path` with `content` atomically: readers see the old file or the
// new one, never a part (a crash leaves at most a stray temporary file).
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

// The whole file, or nullopt when it does not exist.
std::optional<std::string> read_file_if_exists(const std::filesystem::path& path);

}  // namespace trainhook::support
