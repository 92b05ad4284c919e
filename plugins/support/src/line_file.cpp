#include <trainhook/support/line_file.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace trainhook::support {
namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err) {
  throw std::system_error(err, std::generic_category(), what + " " + path.string());
}

void write_all(int fd, const char* data, size_t size, const std::filesystem::path& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write to", path, errno);
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
}

void make_parent(const std::filesystem::path& path) {
  if (!path.has_parent_path()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) fail("cannot create the folder of", path, ec.value());
}

}  // namespace

AppendFile::AppendFile(const std::filesystem::path& path) : path_(path) {
  make_parent(path);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail("cannot open for appending", path, errno);
}

AppendFile::~AppendFile() { close(); }

AppendFile::AppendFile(AppendFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AppendFile& AppendFile::operator=(AppendFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void AppendFile::write_line(const std::string& line) {
  if (fd_ < 0) throw std::logic_error("AppendFile::write_line on a closed file");
  std::string buf;
  buf.reserve(line.size() + 1);
  buf += line;
  buf += '\n';
  write_all(fd_, buf.data(), buf.size(), path_);
}

void AppendFile::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  make_parent(path);
  std::string tmpl = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file next to", path, errno);
  const std::filesystem::path tmp = tmpl;
  try {
    write_all(fd, content.data(), content.size(), tmp);
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) fail("cannot sync", tmp, errno);
    if (::close(fd) != 0) fail("cannot close", tmp, errno);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail("cannot rename " + tmp.string() + " to", path, err);
  }
}

std::optional<std::string> read_file_if_exists(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    fail("cannot read", path, EACCES);
  }
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) fail("cannot read", path, EIO);
  return s.str();
}

}  // namespace trainhook::support
