#include "registry_cache.hpp"

#include "library_record_json.hpp"

#include <trainhook/abi.h>
#include <trainhook/common/package_version.hpp>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace trainhook::detail {
namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 1;

// The host that wrote the cache: another version or ABI minor may judge a
// library differently (a newer minor accepts what this one refused).
nlohmann::json host_identity() {
  return {{"format", kFormat},
          {"trainhook_version", package_version()},
          {"abi",
           std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) + "." + std::to_string(TRAINHOOK_ABI_VERSION_MINOR)}};
}

fs::path default_cache_file() {
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
    base = fs::path(home) / ".cache";
  } else {
    return {};
  }
  return base / "trainhook" / ("registry-abi" + std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) + ".json");
}

int64_t nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISSOCK(mode)) return "a socket";
  return "of another kind";
}

// Closes the descriptor (and so releases its lock) when it goes out of scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::optional<LibraryFileKey> library_file_key(const fs::path& canonical) {
  struct stat st {};
  if (::stat(canonical.c_str(), &st) != 0) return std::nullopt;
  return library_file_key(canonical, st);
}

LibraryFileKey library_file_key(const fs::path& canonical, const struct stat& st) {
  LibraryFileKey key;
  key.path = canonical.string();
  key.size = static_cast<uintmax_t>(st.st_size);
  key.mtime_ns = nanoseconds(st.st_mtim);
  key.ctime_ns = nanoseconds(st.st_ctim);
  key.inode = static_cast<uint64_t>(st.st_ino);
  return key;
}

RegistryCache RegistryCache::from_environment() {
  const char* env = std::getenv("TRAINHOOK_REGISTRY_CACHE");
  if (env != nullptr && std::string(env) == "off") return RegistryCache(fs::path());
  return RegistryCache(env != nullptr && *env != '\0' ? fs::path(env) : default_cache_file());
}

RegistryCache::RegistryCache(fs::path file) : file_(std::move(file)) {
  if (file_.empty()) return;
  if (read_into(entries_, /*warn=*/true) == Read::not_regular) file_.clear();
}

RegistryCache::Read RegistryCache::read_into(std::map<std::string, Entry>& out, bool warn) const {
  // Never opened blocking: stat first, so a device is not even opened, then
  // O_NONBLOCK + fstat, so a FIFO put there meanwhile does not hang the run.
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) {
    if (errno != ENOENT && warn)
      spdlog::warn("registry cache {} cannot be read ({}); scanning without it", file_.string(),
                   std::strerror(errno));
    return Read::absent;
  }
  Fd fd;
  if (S_ISREG(st.st_mode)) fd.fd = ::open(file_.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd.fd >= 0 && ::fstat(fd.fd, &st) != 0) st.st_mode = 0;
  if (!S_ISREG(st.st_mode)) {
    if (warn)
      spdlog::warn(
          "registry cache {} is {}, not a regular file; ignoring it (every library is scanned, nothing "
          "is saved; TRAINHOOK_REGISTRY_CACHE names the cache file, =off turns it off)",
          file_.string(), file_kind(st.st_mode));
    return Read::not_regular;
  }
  if (fd.fd < 0) {
    if (warn)
      spdlog::warn("registry cache {} cannot be read ({}); scanning without it", file_.string(),
                   std::strerror(errno));
    return Read::absent;
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  try {
    const auto doc = nlohmann::json::parse(text);
    if (!doc.is_object() || doc.value("host", nlohmann::json()) != host_identity()) {
      if (warn)
        spdlog::debug("registry cache {} was written by another trainhook version; rescanning",
                      file_.string());
      return Read::read;
    }
    size_t stale = 0;
    for (const auto& e : doc.at("libraries")) {
      if (!e.is_object()) throw std::runtime_error("a library entry is not a JSON object");
      // Written by a version that keyed on size, mtime and inode only: its
      // verdict may be about other bytes, so the file is scanned again.
      if (!e.contains("ctime_ns") || !e.contains("sha256")) {
        ++stale;
        continue;
      }
      Entry entry;
      entry.key.path = e.at("path").get<std::string>();
      entry.key.size = e.at("size").get<uintmax_t>();
      entry.key.mtime_ns = e.at("mtime_ns").get<int64_t>();
      entry.key.ctime_ns = e.at("ctime_ns").get<int64_t>();
      entry.key.inode = e.at("inode").get<uint64_t>();
      entry.sha256 = e.at("sha256").get<std::string>();
      if (entry.sha256.size() != 64) throw std::runtime_error("a SHA-256 is not 64 hex digits");
      entry.timed_out_under_ms = e.value("timed_out_under_ms", int64_t{0});
      entry.record = e.at("record");
      LibraryRecord check;
      record_from_json(entry.record, check);  // a damaged entry fails here, not at use
      out[entry.key.path] = std::move(entry);
    }
    if (stale > 0 && warn)
      spdlog::debug(
          "registry cache {}: {} entries from an older trainhook (no ctime, no SHA-256); their "
          "libraries are scanned again",
          file_.string(), stale);
  } catch (const std::exception& e) {
    out.clear();
    if (warn) spdlog::warn("registry cache {} is damaged ({}); rebuilding it", file_.string(), e.what());
  }
  return Read::read;
}

std::optional<CachedScan> RegistryCache::lookup(const LibraryFileKey& key) const {
  const auto it = entries_.find(key.path);
  if (it == entries_.end() || !(it->second.key == key)) return std::nullopt;
  CachedScan scan;
  record_from_json(it->second.record, scan.record);
  scan.sha256 = it->second.sha256;
  scan.timed_out_under = std::chrono::milliseconds(it->second.timed_out_under_ms);
  return scan;
}

void RegistryCache::store(const LibraryFileKey& key, const CachedScan& scan) {
  Entry e{key, scan.sha256, static_cast<int64_t>(scan.timed_out_under.count()), record_to_json(scan.record)};
  entries_[key.path] = e;
  fresh_[key.path] = std::move(e);
}

void RegistryCache::save() {
  if (file_.empty() || fresh_.empty()) return;
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  const std::string lock_path = file_.string() + ".lock";
  Fd lock;
  lock.fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  struct stat st {};
  if (lock.fd >= 0 && (::fstat(lock.fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    spdlog::warn("registry cache {}: {} is {}, not a regular file; not saved", file_.string(), lock_path,
                 file_kind(st.st_mode));
    return;
  }
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0) {
    spdlog::warn("registry cache {}: cannot lock {} ({}); not saved", file_.string(), lock_path,
                 std::strerror(errno));
    return;
  }
  // What other runs saved meanwhile, then ours on top; entries of files that
  // are gone are dropped.
  std::map<std::string, Entry> merged;
  if (read_into(merged, /*warn=*/false) == Read::not_regular) {
    spdlog::warn("registry cache {} is no longer a regular file; not saved (nor replaced)", file_.string());
    return;
  }
  for (auto& [path, e] : fresh_) merged[path] = e;
  nlohmann::json libraries = nlohmann::json::array();
  for (const auto& [path, e] : merged) {
    if (!fs::exists(path, ec)) continue;
    nlohmann::json entry = {{"path", e.key.path},         {"size", e.key.size},
                            {"mtime_ns", e.key.mtime_ns}, {"ctime_ns", e.key.ctime_ns},
                            {"inode", e.key.inode},       {"sha256", e.sha256},
                            {"record", e.record}};
    if (e.timed_out_under_ms > 0) entry["timed_out_under_ms"] = e.timed_out_under_ms;
    libraries.push_back(std::move(entry));
  }
  const nlohmann::json doc = {{"host", host_identity()}, {"libraries", libraries}};
  const fs::path tmp = file_.string() + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << doc.dump(1) << "\n";
    out.flush();
    if (!out) {
      spdlog::warn("registry cache {}: cannot write {}; not saved", file_.string(), tmp.string());
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, file_, ec);
  if (ec) {
    spdlog::warn("registry cache {}: {}; not saved", file_.string(), ec.message());
    fs::remove(tmp, ec);
    return;
  }
  fresh_.clear();
}

}  // namespace trainhook::detail
