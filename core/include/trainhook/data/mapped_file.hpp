// A file mapped read-only into memory (mmap): data files are read through the
// mapping, never whole into memory. Torch-free; data/mapped_tensors.hpp makes
// tensors that view it and keep it alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace trainhook {

class MappedFile {
 public:
  // Throws std::runtime_error naming the file: missing, a folder, unreadable,
  // or not mappable. An empty file maps to size() 0 and data() nullptr.
  explicit MappedFile(const std::filesystem::path& file);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const noexcept { return data_; }
  uint64_t size() const noexcept { return size_; }
  const std::string& name() const noexcept { return name_; }
  // Drops the mapping's pages from this process's resident set (the page cache
  // keeps them; the next read faults them back). Safe while other threads read.
  void release_pages() const noexcept;
  // The same for the pages around bytes [offset, offset + length), widened to
  // 2 MiB boundaries: a read fault may have mapped a whole page-cache folio.
  void release_range(uint64_t offset, uint64_t length) const noexcept;

 private:
  const char* data_ = nullptr;
  uint64_t size_ = 0;
  std::string name_;
};

std::shared_ptr<const MappedFile> map_file(const std::filesystem::path& file);

}  // namespace trainhook
