// The registry cache: what the scanner found in each plugin library, kept per
// user and ABI major in one JSON file ($XDG_CACHE_HOME/trainhook/
// registry-abi<major>.json, else ~/.cache/...; TRAINHOOK_REGISTRY_CACHE=PATH
// names another file, =off scans every library and writes nothing).
//
// An entry holds while the file's canonical path, size, modification time,
// inode and status-change time (ctime) are unchanged: GStreamer's key plus the
// ctime, which no user-space tool can set back, so a copy over the file that
// kept its size and mtime (`cp -p`, `rsync --inplace`) misses. That stat key is
// all a listing relies on. Each entry also keeps the SHA-256 of the bytes that
// were scanned: the registry compares it with the file's before anything loads
// the library, and scans a file whose bytes differ again first.
//
// A refused library stays refused until its file changes, except a "did not
// answer in time" verdict, which records the limit it was reached under and is
// judged again under a higher one. An entry written by an older version
// (without ctime or SHA-256) is stale: skipped, so its file is scanned again. A
// missing, damaged or other-version file is rebuilt; a cache path that is not a
// regular file (a FIFO, a device) is ignored with a warning and never opened
// blocking. Writes are atomic (temporary file + rename) and merged under an
// advisory lock on <file>.lock, so runs scanning at once each keep what the
// other found.
#pragma once

#include <trainhook/plugin_host/registry/library_record.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace trainhook::detail {

struct LibraryFileKey {
  std::string path;  // canonical
  uintmax_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  bool operator==(const LibraryFileKey& o) const {
    return path == o.path && size == o.size && mtime_ns == o.mtime_ns && ctime_ns == o.ctime_ns &&
           inode == o.inode;
  }
};

// nullopt when the file cannot be stat'ed (the scan then names the problem).
std::optional<LibraryFileKey> library_file_key(const std::filesystem::path& canonical);
// The key of the file `st` describes (fstat of the descriptor the registry
// judges), remembered under `canonical`.
LibraryFileKey library_file_key(const std::filesystem::path& canonical, const struct stat& st);

// One remembered scan.
struct CachedScan {
  LibraryRecord record;  // the scan result only (path and folder are the registry's)
  std::string sha256;    // hex, of the bytes the scanner was given
  // The limit a "did not answer in time" verdict was reached under; zero for
  // every other verdict.
  std::chrono::milliseconds timed_out_under{0};
};

class RegistryCache {
 public:
  // From the environment (see above). Never throws: a cache that cannot be
  // read is empty, with a warning when it existed but was damaged.
  static RegistryCache from_environment();
  // A cache kept in `file` (empty path = no cache at all).
  explicit RegistryCache(std::filesystem::path file);

  // The file in use; empty when there is none (off, or not a regular file).
  const std::filesystem::path& file() const noexcept { return file_; }
  // The scan recorded for this exact stat key, if any.
  std::optional<CachedScan> lookup(const LibraryFileKey& key) const;
  // Records a fresh scan result (kept in memory until save()).
  void store(const LibraryFileKey& key, const CachedScan& scan);
  // Merges what this run scanned into the file on disk; a failure is a warning.
  void save();

 private:
  struct Entry {
    LibraryFileKey key;
    std::string sha256;
    int64_t timed_out_under_ms = 0;
    nlohmann::json record;
  };
  // What reading the file found: nothing there yet, entries (possibly none
  // usable), or something that is not a regular file (left alone).
  enum class Read { absent, read, not_regular };
  Read read_into(std::map<std::string, Entry>& out, bool warn) const;

  std::filesystem::path file_;
  std::map<std::string, Entry> entries_;  // by canonical path
  std::map<std::string, Entry> fresh_;    // scanned by this process
};

}  // namespace trainhook::detail
