// A disk spool of JSON lines: records that could not be delivered are appended;
// later (in this process or a later run) they are read back in order, and what
// the receiver acknowledged is cut off the front.
//
// Files: <path> holds the lines; <path>.ack holds the byte offset up to which
// lines were acknowledged (written before the spool is compacted, so a crash
// never replays acknowledged lines twice unless the .ack write itself was lost).
// When everything is acknowledged both files are removed; when the
// acknowledged prefix grows large, the rest is rewritten to a fresh file.
// A torn last line (crash while appending) is cut off when the spool is opened.
//
// Not thread-safe: use a Spool from one thread (a plugin's worker).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::support {

struct SpoolChunk {
  std::vector<std::string> lines;  // without the trailing newline
  uint64_t end_offset = 0;         // pass to acknowledge() once delivered
};

class Spool {
 public:
  // Opens (or prepares to create) the spool at `file`; creates nothing yet.
  // Throws std::runtime_error naming the file when it cannot be read.
  explicit Spool(std::filesystem::path file);

  // Appends lines (each one JSON text without newlines) and flushes them to the
  // OS. Creates parent folders. Throws std::runtime_error naming the file.
  void append(const std::vector<std::string>& lines);

  // Puts lines before every unacknowledged one (a failed request's lines,
  // older than what was spilled while it was in flight): the file is rewritten
  // as lines + the unacknowledged rest, with the .ack reset (as compaction
  // does). Throws std::runtime_error naming the file.
  void prepend(const std::vector<std::string>& lines);

  // Up to max_lines unacknowledged lines from the front, in order.
  SpoolChunk peek(size_t max_lines) const;
  // Marks everything before chunk.end_offset as delivered.
  void acknowledge(const SpoolChunk& chunk);

  uint64_t pending() const noexcept { return pending_lines_; }  // unacknowledged lines
  bool empty() const noexcept { return pending_lines_ == 0; }
  const std::filesystem::path& path() const noexcept { return file_; }

 private:
  void write_ack() const;
  void compact();
  // Replaces the file by `front` + the unacknowledged lines; resets the ack.
  void rewrite(const std::vector<std::string>& front);

  std::filesystem::path file_;
  std::filesystem::path ack_file_;
  uint64_t ack_offset_ = 0;
  uint64_t pending_lines_ = 0;
};

}  // namespace trainhook::support
