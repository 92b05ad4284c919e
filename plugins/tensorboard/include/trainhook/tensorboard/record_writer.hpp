// TFRecord framing and the event file itself.
//
// A record is: u64 length (little-endian) | u32 masked CRC-32C of those 8 bytes |
// data | u32 masked CRC-32C of data. EventFile appends whole batches of framed
// records with write(2) and, when a write fails, cuts the file back to the end of
// the last complete record, so what was written before is never corrupted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainhook::tensorboard {

// Appends one framed record holding `data` to `out`.
void append_record(std::string& out, std::string_view data);

// Bytes a record of n data bytes takes.
constexpr size_t record_size(size_t n) noexcept { return n + 16; }

class EventFile {
 public:
  // Creates `path` (which must not exist yet). Throws std::runtime_error naming the path.
  explicit EventFile(std::filesystem::path path);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  // Appends bytes that hold whole records; they reach the OS (and so a live
  // TensorBoard) when this returns. On failure returns false, leaves the file
  // at its previous length and sets error().
  bool append(std::string_view records);
  // fsync and close; idempotent. Returns false (and sets error()) on failure.
  bool close();

  const std::filesystem::path& path() const noexcept { return path_; }
  uint64_t size() const noexcept { return size_; }
  const std::string& error() const noexcept { return error_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string error_;
};

}  // namespace trainhook::tensorboard
