// Central-directory zip reading for torch.save files (stored records only).
#include <trainhook/checkpoint/torch_zip_reader.hpp>

#include <stdexcept>

namespace trainhook {
namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr size_t kEndOfDirectorySize = 22;

class Bytes {
 public:
  Bytes(std::string_view bytes, const std::string& file) : b_(bytes), file_(file) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(file_ + ": not a readable torch.save zip file: " + what);
  }
  void need(uint64_t at, uint64_t n, const char* what) const {
    if (at > b_.size() || n > b_.size() - at)
      fail(std::string(what) + " at byte " + std::to_string(at) + " runs past the end of the file (" +
           std::to_string(b_.size()) + " bytes): truncated or a lying size");
  }
  uint64_t le(uint64_t at, int n, const char* what) const {
    need(at, static_cast<uint64_t>(n), what);
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b_[at + static_cast<uint64_t>(i)]);
    return v;
  }
  std::string_view view(uint64_t at, uint64_t n, const char* what) const {
    need(at, n, what);
    return b_.substr(at, n);
  }
  size_t size() const { return b_.size(); }

 private:
  std::string_view b_;
  const std::string& file_;
};

// The zip64 extra field (id 1) of a central entry: the 8-byte values that the
// 32-bit fields hold 0xFFFFFFFF for, in the order size, compressed, offset.
void read_zip64_extra(const Bytes& z, uint64_t extra, uint64_t extra_len, uint64_t& size,
                      uint64_t& compressed, uint64_t& offset) {
  uint64_t at = extra;
  while (at + 4 <= extra + extra_len) {
    const uint64_t id = z.le(at, 2, "an extra field"), len = z.le(at + 2, 2, "an extra field");
    if (at + 4 + len > extra + extra_len) z.fail("an extra field is longer than its entry");
    if (id == 1) {
      uint64_t p = at + 4;
      const uint64_t end = p + len;
      auto take = [&](uint64_t& v) {
        if (v != 0xFFFFFFFFu) return;
        if (p + 8 > end) z.fail("a zip64 extra field is too short");
        v = z.le(p, 8, "a zip64 extra field");
        p += 8;
      };
      take(size);
      take(compressed);
      take(offset);
      return;
    }
    at += 4 + len;
  }
}

}  // namespace

bool looks_like_zip(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4);
}

TorchZip read_torch_zip(std::string_view bytes, const std::string& file) {
  const Bytes z(bytes, file);
  if (!looks_like_zip(bytes)) z.fail("it does not start with a zip local header (PK\\3\\4)");
  if (bytes.size() < kEndOfDirectorySize) z.fail("shorter than a zip end record");
  // The end record: the last signature within its comment's reach (65535 bytes).
  uint64_t eocd = bytes.size() - kEndOfDirectorySize;
  const uint64_t lowest = eocd > 65535 ? eocd - 65535 : 0;
  while (z.le(eocd, 4, "the end record") != kEndOfDirectory) {
    if (eocd == lowest) z.fail("no zip end record (truncated)");
    --eocd;
  }
  uint64_t entries = z.le(eocd + 10, 2, "the end record");
  uint64_t dir_size = z.le(eocd + 12, 4, "the end record");
  uint64_t dir_offset = z.le(eocd + 16, 4, "the end record");
  if (eocd >= 20 && z.le(eocd - 20, 4, "the zip64 locator") == kZip64Locator) {
    const uint64_t end64 = z.le(eocd - 20 + 8, 8, "the zip64 locator");
    if (z.le(end64, 4, "the zip64 end record") != kZip64EndOfDirectory) z.fail("a bad zip64 end record");
    entries = z.le(end64 + 32, 8, "the zip64 end record");
    dir_size = z.le(end64 + 40, 8, "the zip64 end record");
    dir_offset = z.le(end64 + 48, 8, "the zip64 end record");
  }
  z.need(dir_offset, dir_size, "the central directory");
  if (entries > dir_size / 46) z.fail("the end record counts more entries than its directory can hold");
  TorchZip out;
  uint64_t at = dir_offset;
  for (uint64_t i = 0; i < entries; ++i) {
    if (at + 46 > dir_offset + dir_size || z.le(at, 4, "a directory entry") != kCentralHeader)
      z.fail("directory entry " + std::to_string(i) + " is damaged");
    const uint64_t method = z.le(at + 10, 2, "a directory entry");
    uint64_t compressed = z.le(at + 20, 4, "a directory entry");
    uint64_t size = z.le(at + 24, 4, "a directory entry");
    const uint64_t name_len = z.le(at + 28, 2, "a directory entry");
    const uint64_t extra_len = z.le(at + 30, 2, "a directory entry");
    const uint64_t comment_len = z.le(at + 32, 2, "a directory entry");
    uint64_t local = z.le(at + 42, 4, "a directory entry");
    const std::string name(z.view(at + 46, name_len, "a record name"));
    read_zip64_extra(z, at + 46 + name_len, extra_len, size, compressed, local);
    if (method != 0) {  // a TorchScript archive's code/: named, never read
      if (!out.compressed.insert(name).second) z.fail("record '" + name + "' appears twice");
      at += 46 + name_len + extra_len + comment_len;
      continue;
    }
    if (compressed != size) z.fail("record '" + name + "' has different stored and unpacked sizes");
    if (z.le(local, 4, "a local header") != kLocalHeader) z.fail("record '" + name + "' has no local header");
    const uint64_t data =
        local + 30 + z.le(local + 26, 2, "a local header") + z.le(local + 28, 2, "a local header");
    if (data > bytes.size() || size > bytes.size() - data)
      z.fail("record '" + name + "' (" + std::to_string(size) + " bytes at " + std::to_string(data) +
             ") runs past the end of the file (" + std::to_string(bytes.size()) +
             " bytes): truncated or a lying size");
    if (!out.records.emplace(name, bytes.substr(data, size)).second)
      z.fail("record '" + name + "' appears twice");
    at += 46 + name_len + extra_len + comment_len;
  }
  return out;
}

}  // namespace trainhook
