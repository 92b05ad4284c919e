// The completeness record of one uploaded checkpoint: every file's relative
// path, size and SHA-256. It is uploaded LAST, so a checkpoint without a
// manifest (or whose files do not match it) is a partial upload.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::flyte {

// File name of the manifest inside a checkpoint folder / under its key prefix.
inline constexpr const char* kManifestName = "trainhook_manifest.json";

struct ManifestEntry {
  std::string path;  // '/'-separated, relative to the checkpoint folder
  uint64_t size = 0;
  std::string sha256;  // lower-case hex
};

struct Manifest {
  std::string checkpoint;  // "checkpoint-<step>"
  int64_t step = -1;
  std::vector<ManifestEntry> files;  // sorted by path

  // Hashes every regular file under dir (except the manifest itself).
  static Manifest build(const std::filesystem::path& dir, const std::string& checkpoint_name);
  // Throws std::invalid_argument naming `source` and the bad field.
  static Manifest parse(const std::string& json_text, const std::string& source);
  std::string to_json() const;
  uint64_t total_bytes() const;

  // Empty when dir holds every listed file with the listed size and hash;
  // otherwise the first problem, naming the file.
  std::optional<std::string> verify(const std::filesystem::path& dir) const;
};

// "checkpoint-<digits>" -> step; nullopt for any other name.
std::optional<int64_t> checkpoint_step(const std::string& name);

}  // namespace trainhook::flyte
