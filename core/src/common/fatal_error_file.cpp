#include <trainhook/common/fatal_error_file.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace trainhook {
namespace {

// JSON string escaping that needs no allocation: appends to buf[0..cap).
size_t append_escaped(char* buf, size_t used, size_t cap, const char* text) noexcept {
  static const char kHex[] = "0123456789abcdef";
  for (const char* p = text; *p != '\0'; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    char esc[7] = {};
    size_t n = 0;
    if (c == '"' || c == '\\') {
      esc[0] = '\\';
      esc[1] = static_cast<char>(c);
      n = 2;
    } else if (c == '\n') {
      esc[0] = '\\';
      esc[1] = 'n';
      n = 2;
    } else if (c < 0x20) {
      const char u[7] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15], 0};
      std::memcpy(esc, u, 6);
      n = 6;
    } else {
      esc[0] = static_cast<char>(c);
      n = 1;
    }
    if (used + n >= cap) break;
    std::memcpy(buf + used, esc, n);
    used += n;
  }
  return used;
}

size_t append_raw(char* buf, size_t used, size_t cap, const char* text) noexcept {
  for (const char* p = text; *p != '\0' && used + 1 < cap; ++p) buf[used++] = *p;
  return used;
}

// Fills buf with the document; returns its length.
size_t format_document(char* buf, size_t cap, const char* message, const char* where, long long timestamp) noexcept {
  char stamp[24];
  char* s = stamp + sizeof stamp;
  *--s = '\0';
  unsigned long long t = timestamp < 0 ? 0 : static_cast<unsigned long long>(timestamp);
  do {
    *--s = static_cast<char>('0' + t % 10);
    t /= 10;
  } while (t > 0);
  // The message goes in twice: each copy gets at most half of what the
  // fixed parts leave, so a long one is cut and the document stays whole.
  const size_t half = cap > 512 ? (cap - 512) / 2 : 0;
  size_t n = 0;
  n = append_raw(buf, n, cap, "{\"message\": {\"message\": \"");
  n = append_escaped(buf, n, n + half, message);
  n = append_raw(buf, n, cap, "\", \"extraInfo\": {\"py_callstack\": \"");
  n = append_escaped(buf, n, n + half, message);
  if (where != nullptr && *where != '\0') {
    n = append_escaped(buf, n, cap - 100, "\n  in ");
    n = append_escaped(buf, n, cap - 100, where);
  }
  n = append_raw(buf, n, cap, "\", \"timestamp\": \"");
  n = append_raw(buf, n, cap, s);
  n = append_raw(buf, n, cap, "\"}}}\n");
  return n;
}

bool write_all(int fd, const char* data, size_t size) noexcept {
  while (size > 0) {
    const ssize_t w = ::write(fd, data, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    size -= static_cast<size_t>(w);
  }
  return true;
}

// Set once by prepare_torchelastic_error_file, read by the signal-safe writer.
char g_path[4096];
char g_where[256];

std::string where_text(const std::string& where) {
  std::string text = where;
  const char* rank = std::getenv("RANK");
  if (rank == nullptr || *rank == '\0') rank = std::getenv("SLURM_PROCID");
  if (rank != nullptr && *rank != '\0') text += ", rank " + std::string(rank);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') text += ", host " + std::string(host);
  text += ", pid " + std::to_string(::getpid());
  return text;
}

}  // namespace

namespace {

// Writes the document to "<path>.tmp" and renames it into place (open, write,
// rename: all async-signal-safe), so torchrun never reads half a file from a
// rank that died while writing. Each rank has its own error file path.
// Returns 0 or the errno of the step that failed.
int write_file_atomically(const char* path, const char* data, size_t n) noexcept {
  char tmp[sizeof g_path + 8];
  const size_t len = std::strlen(path);
  if (len + 5 > sizeof tmp) return ENAMETOOLONG;
  std::memcpy(tmp, path, len);
  std::memcpy(tmp + len, ".tmp", 5);
  const int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  const bool written = write_all(fd, data, n);
  const int write_err = errno;
  ::close(fd);
  if (!written || ::rename(tmp, path) != 0) {
    const int err = written ? errno : write_err;
    ::unlink(tmp);
    return err;
  }
  return 0;
}

}  // namespace

std::string torchelastic_error_json(const std::string& message, const std::string& where, long long timestamp) {
  std::string buf(message.size() * 14 + where.size() * 6 + 1024, '\0');
  buf.resize(format_document(buf.data(), buf.size(), message.c_str(), where.c_str(), timestamp));
  return buf;
}

bool write_torchelastic_error_file(const std::string& message, const std::string& where) noexcept {
  try {
    const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
    if (path == nullptr || *path == '\0') return false;
    const std::string doc =
        torchelastic_error_json(message, where_text(where), static_cast<long long>(std::time(nullptr)));
    if (const int err = write_file_atomically(path, doc.data(), doc.size()); err != 0) {
      std::fprintf(stderr, "trainhook: cannot write TORCHELASTIC_ERROR_FILE '%s' (%s)\n", path,
                   std::strerror(err));
      return false;
    }
    return true;
  } catch (...) {
    return false;
  }
}

void prepare_torchelastic_error_file() noexcept {
  try {
    const char* path = std::getenv("TORCHELASTIC_ERROR_FILE");
    if (path == nullptr || std::strlen(path) >= sizeof g_path) {
      g_path[0] = '\0';
      return;
    }
    const std::string where = where_text("trainhook");
    std::snprintf(g_where, sizeof g_where, "%s", where.c_str());
    std::memcpy(g_path, path, std::strlen(path) + 1);
  } catch (...) {
    g_path[0] = '\0';
  }
}

void write_torchelastic_error_file_signal_safe(const char* message) noexcept {
  if (g_path[0] == '\0') return;
  static char doc[8192];  // only one thread gets here: the handler ends the process
  const size_t n = format_document(doc, sizeof doc, message, g_where, static_cast<long long>(::time(nullptr)));
  (void)write_file_atomically(g_path, doc, n);
}

}  // namespace trainhook
