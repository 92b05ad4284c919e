#include <trainhook/checkpoint/serialize_archive_file.hpp>

#include <trainhook/checkpoint/atomic_file.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;

namespace trainhook {

void save_archive_atomically(torch::serialize::OutputArchive& archive, const fs::path& file) {
  write_file_atomically(file, [&](const fs::path& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr)
      throw std::runtime_error(std::string("cannot open for writing: ") + std::strerror(errno));
    int error = 0;
    // LibTorch's writer throws c10::Error on a short write and then again
    // from its destructor (std::terminate): it is always told that all bytes
    // went out, and the first failure is reported here instead.
    archive.save_to([&](const void* data, size_t n) -> size_t {
      if (error == 0 && n > 0 && std::fwrite(data, 1, n, f) != n) error = errno != 0 ? errno : EIO;
      return n;
    });
    if (std::fflush(f) != 0 && error == 0) error = errno != 0 ? errno : EIO;
    if (std::fclose(f) != 0 && error == 0) error = errno != 0 ? errno : EIO;
    if (error != 0) throw std::runtime_error(std::strerror(error));
  });
}

}  // namespace trainhook
