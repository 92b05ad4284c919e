#include <trainhook/data/mapped_file.hpp>

#include <trainhook/common/mapped_region_faults.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trainhook {

MappedFile::MappedFile(const std::filesystem::path& file) : name_(file.string()) {
  const int fd = ::open(name_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw std::runtime_error(name_ + ": cannot open (" + std::strerror(errno) + ")");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::runtime_error(name_ + ": not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ > 0) {
    // MAP_SHARED read-only: release_pages() may drop pages at any time and a
    // later read faults the file's bytes back in.
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(name_ + ": cannot map into memory (" + std::strerror(err) + ")");
    }
    data_ = static_cast<const char*>(p);
    // Samples are read at random places: no read-ahead beyond what is asked.
    ::madvise(p, size_, MADV_RANDOM);
    // A file that shrinks while mapped is then named, not a bare bus error.
    register_mapped_region(data_, size_, name_.c_str());
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) {
    unregister_mapped_region(data_);
    ::munmap(const_cast<char*>(data_), size_);
  }
}

void MappedFile::release_pages() const noexcept {
  if (data_) ::madvise(const_cast<char*>(data_), size_, MADV_DONTNEED);
}

void MappedFile::release_range(uint64_t offset, uint64_t length) const noexcept {
  if (!data_ || offset >= size_) return;
  constexpr uint64_t kFolio = 2 << 20;
  const uint64_t begin = offset / kFolio * kFolio;
  const uint64_t end = std::min(size_, (offset + length + kFolio - 1) / kFolio * kFolio);
  // The mapping starts page-aligned, so begin is too.
  ::madvise(const_cast<char*>(data_) + begin, end - begin, MADV_DONTNEED);
}

std::shared_ptr<const MappedFile> map_file(const std::filesystem::path& file) {
  return std::make_shared<const MappedFile>(file);
}

}  // namespace trainhook
