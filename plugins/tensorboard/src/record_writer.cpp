#include <trainhook/tensorboard/record_writer.hpp>

#include <trainhook/tensorboard/crc32c.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trainhook::tensorboard {
namespace {

void append_u32_le(std::string& out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  out.append(b, 4);
}

}  // namespace

void append_record(std::string& out, std::string_view data) {
  char len[8];
  const uint64_t n = data.size();
  for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  out.append(len, 8);
  append_u32_le(out, mask_crc(crc32c(len, 8)));
  out.append(data.data(), data.size());
  append_u32_le(out, mask_crc(crc32c(data)));
}

EventFile::EventFile(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error("cannot create event file " + path_.string() + ": " + std::strerror(errno));
}

EventFile::~EventFile() { close(); }

bool EventFile::append(std::string_view records) {
  if (fd_ < 0) {
    if (error_.empty()) error_ = "event file " + path_.string() + " is closed";
    return false;
  }
  const char* p = records.data();
  size_t left = records.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = "cannot write event file " + path_.string() + ": " + std::strerror(errno);
      // Drop the partial batch so the file ends with a complete record.
      if (::ftruncate(fd_, static_cast<off_t>(size_)) == 0) ::lseek(fd_, static_cast<off_t>(size_), SEEK_SET);
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  size_ += records.size();
  return true;
}

bool EventFile::close() {
  if (fd_ < 0) return error_.empty();
  bool ok = true;
  if (::fsync(fd_) != 0 && errno != EINVAL) {
    error_ = "cannot sync event file " + path_.string() + ": " + std::strerror(errno);
    ok = false;
  }
  if (::close(fd_) != 0 && ok) {
    error_ = "cannot close event file " + path_.string() + ": " + std::strerror(errno);
    ok = false;
  }
  fd_ = -1;
  return ok;
}

}  // namespace trainhook::tensorboard
