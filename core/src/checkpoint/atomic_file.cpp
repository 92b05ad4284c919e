#include <trainhook/checkpoint/atomic_file.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

fs::path temporary_beside(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  fs::path tmp = file;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return tmp;
}

// The data must be on disk before the rename makes it the file: else a crash
// right after the rename can leave an empty file under the final name.
std::string sync_file(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::strerror(errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? std::string() : std::strerror(err);
}

// When the temporary file stopped at the process's file size limit (the
// CLI ignores SIGXFSZ, so the write failed with EFBIG instead of the signal
// ending the run): the limit, in bytes and in `ulimit -f`'s blocks. "" when
// no limit is set or the file is below it.
std::string file_size_limit_note(const fs::path& tmp) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  struct stat st {};
  if (::stat(tmp.c_str(), &st) != 0 || static_cast<rlim_t>(st.st_size) < limit.rlim_cur) return {};
  return " (it reached the file size limit of this process, " + std::to_string(limit.rlim_cur) +
         " bytes: RLIMIT_FSIZE, `ulimit -f` " + std::to_string(limit.rlim_cur / 1024) +
         " (blocks of 1024 bytes), set by the shell or job that started the run or by a plugin's setrlimit; "
         "raise it, e.g. `ulimit -f unlimited`)";
}

}  // namespace

std::string free_space_note(const fs::path& folder) {
  std::error_code ec;
  const fs::space_info s = fs::space(folder.empty() ? fs::path(".") : folder, ec);
  if (ec) return {};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(s.available) / (1024.0 * 1024.0));
  return std::string(" (") + buf + " free on " + (folder.empty() ? std::string(".") : folder.string()) + ")";
}

void write_file_atomically(const fs::path& file, const std::function<void(const fs::path& tmp)>& write) {
  const fs::path tmp = temporary_beside(file);
  const auto fail = [&](const std::string& reason) {
    const std::string limit = file_size_limit_note(tmp);
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("cannot write " + file.string() + ": " + reason +
                             (limit.empty() ? free_space_note(file.parent_path()) : limit));
  };
  try {
    write(tmp);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  if (const std::string problem = sync_file(tmp); !problem.empty()) fail("sync failed: " + problem);
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) fail("rename of " + tmp.string() + " failed: " + ec.message());
}

void write_text_atomically(const fs::path& file, const std::string& text) {
  write_file_atomically(file, [&](const fs::path& tmp) {
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr)
      throw std::runtime_error(std::string("cannot open for writing: ") + std::strerror(errno));
    const size_t written = std::fwrite(text.data(), 1, text.size(), f);
    const int err = written == text.size() ? 0 : errno;
    if (std::fclose(f) != 0 || written != text.size())
      throw std::runtime_error(std::string("write failed: ") + std::strerror(err != 0 ? err : errno));
  });
}

}  // namespace trainhook
