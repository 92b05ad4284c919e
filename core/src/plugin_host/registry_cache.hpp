// The registry cache: what the scanner found in each plugin library, kept per
// user and ABI major in one JSON file ($XDG_CACHE_HOME/trainhook/
// registry-abi<major>.json, else ~/.cache/...; TRAINHOOK_REGISTRY_CACHE=PATH
// names another file, =off scans every library and writes nothing). An entry
// holds while the file's canonical path, size, modification time and inode are
// unchanged, as GStreamer's registry does; a refused library stays refused
// until its file changes. A missing, damaged or other-version file is rebuilt.
// Writes are atomic (temporary file + rename) and merged under an advisory lock
// on <file>.lock, so runs scanning at once each keep what the other found.
#pragma once

#include <trainhook/plugin_host/plugin_registry.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace trainhook::detail {

struct LibraryFileKey {
  std::string path;  // canonical
  uintmax_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  bool operator==(const LibraryFileKey& o) const {
    return path == o.path && size == o.size && mtime_ns == o.mtime_ns && inode == o.inode;
  }
};

// nullopt when the file cannot be stat'ed (the scan then names the problem).
std::optional<LibraryFileKey> library_file_key(const std::filesystem::path& canonical);

class RegistryCache {
 public:
  // From the environment (see above). Never throws: a cache that cannot be
  // read is empty, with a warning when it existed but was damaged.
  static RegistryCache from_environment();
  // A cache kept in `file` (empty path = no cache at all).
  explicit RegistryCache(std::filesystem::path file);

  const std::filesystem::path& file() const noexcept { return file_; }
  // The scan result recorded for this exact file, if any.
  std::optional<LibraryRecord> lookup(const LibraryFileKey& key) const;
  // Records a fresh scan result (kept in memory until save()).
  void store(const LibraryFileKey& key, const LibraryRecord& rec);
  // Merges what this run scanned into the file on disk; a failure is a warning.
  void save();

 private:
  struct Entry {
    LibraryFileKey key;
    nlohmann::json record;
  };
  void read_into(std::map<std::string, Entry>& out, bool warn) const;

  std::filesystem::path file_;
  std::map<std::string, Entry> entries_;  // by canonical path
  std::map<std::string, Entry> fresh_;    // scanned by this process
};

}  // namespace trainhook::detail
