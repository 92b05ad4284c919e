#include "registry_cache.hpp"

#include "library_record_json.hpp"

#include <trainhook/abi.h>

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifndef TRAINHOOK_VERSION
#define TRAINHOOK_VERSION "0.0.0"
#endif

namespace trainhook::detail {
namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 1;

// The host that wrote the cache: another version or ABI minor may judge a
// library differently (a newer minor accepts what this one refused).
nlohmann::json host_identity() {
  return {{"format", kFormat},
          {"trainhook_version", TRAINHOOK_VERSION},
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
  LibraryFileKey key;
  key.path = canonical.string();
  key.size = static_cast<uintmax_t>(st.st_size);
  key.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  key.inode = static_cast<uint64_t>(st.st_ino);
  return key;
}

RegistryCache RegistryCache::from_environment() {
  const char* env = std::getenv("TRAINHOOK_REGISTRY_CACHE");
  if (env != nullptr && std::string(env) == "off") return RegistryCache(fs::path());
  return RegistryCache(env != nullptr && *env != '\0' ? fs::path(env) : default_cache_file());
}

RegistryCache::RegistryCache(fs::path file) : file_(std::move(file)) {
  if (!file_.empty()) read_into(entries_, /*warn=*/true);
}

void RegistryCache::read_into(std::map<std::string, Entry>& out, bool warn) const {
  std::ifstream in(file_, std::ios::binary);
  if (!in) return;  // none yet
  std::stringstream text;
  text << in.rdbuf();
  try {
    const auto doc = nlohmann::json::parse(text.str());
    if (!doc.is_object() || doc.value("host", nlohmann::json()) != host_identity()) {
      if (warn)
        spdlog::debug("registry cache {} was written by another trainhook version; rescanning",
                      file_.string());
      return;
    }
    for (const auto& e : doc.at("libraries")) {
      Entry entry;
      entry.key.path = e.at("path").get<std::string>();
      entry.key.size = e.at("size").get<uintmax_t>();
      entry.key.mtime_ns = e.at("mtime_ns").get<int64_t>();
      entry.key.inode = e.at("inode").get<uint64_t>();
      entry.record = e.at("record");
      LibraryRecord check;
      record_from_json(entry.record, check);  // a damaged entry fails here, not at use
      out[entry.key.path] = std::move(entry);
    }
  } catch (const std::exception& e) {
    out.clear();
    if (warn) spdlog::warn("registry cache {} is damaged ({}); rebuilding it", file_.string(), e.what());
  }
}

std::optional<LibraryRecord> RegistryCache::lookup(const LibraryFileKey& key) const {
  const auto it = entries_.find(key.path);
  if (it == entries_.end() || !(it->second.key == key)) return std::nullopt;
  LibraryRecord rec;
  record_from_json(it->second.record, rec);
  return rec;
}

void RegistryCache::store(const LibraryFileKey& key, const LibraryRecord& rec) {
  Entry e{key, record_to_json(rec)};
  entries_[key.path] = e;
  fresh_[key.path] = std::move(e);
}

void RegistryCache::save() {
  if (file_.empty() || fresh_.empty()) return;
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  Fd lock;
  lock.fd = ::open((file_.string() + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock.fd < 0 || ::flock(lock.fd, LOCK_EX) != 0) {
    spdlog::warn("registry cache {}: cannot lock {}.lock ({}); not saved", file_.string(), file_.string(),
                 std::strerror(errno));
    return;
  }
  // What other runs saved meanwhile, then ours on top; entries of files that
  // are gone are dropped.
  std::map<std::string, Entry> merged;
  read_into(merged, /*warn=*/false);
  for (auto& [path, e] : fresh_) merged[path] = e;
  nlohmann::json libraries = nlohmann::json::array();
  for (const auto& [path, e] : merged) {
    if (!fs::exists(path, ec)) continue;
    libraries.push_back({{"path", e.key.path},
                         {"size", e.key.size},
                         {"mtime_ns", e.key.mtime_ns},
                         {"inode", e.key.inode},
                         {"record", e.record}});
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
