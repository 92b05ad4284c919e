#include <trainhook/checkpoint/checkpoint_manifest.hpp>

#include <trainhook/common/sha256sum.hpp>
#include <trainhook/checkpoint/atomic_file.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// The manifest's entries; a name must stay inside the checkpoint folder.
std::vector<Sha256sumLine> read_manifest(const fs::path& manifest) {
  std::vector<Sha256sumLine> entries = read_sha256sum_file(manifest);
  for (const auto& e : entries)
    if (e.name.find("..") != std::string::npos || e.name.front() == '/')
      throw std::runtime_error(manifest.string() + ":" + std::to_string(e.line) + ": the file name '" +
                               e.name + "' leaves the checkpoint folder");
  return entries;
}

void check_entry(const fs::path& dir, const Sha256sumLine& e) {
  const fs::path file = dir / e.name;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw std::runtime_error(file.string() + ": missing from the checkpoint (listed in " +
                             kCheckpointManifestFile + ")");
  if (sha256_of_file(file) != e.hash)
    throw std::runtime_error(
        file.string() +
        ": damaged: its SHA-256 differs from the one recorded when the checkpoint was saved "
        "(" +
        std::string(kCheckpointManifestFile) + " line " + std::to_string(e.line) +
        "); restore the file or use another checkpoint");
}

}  // namespace

void write_checkpoint_manifest(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), dir).generic_string();
    if (name == kCheckpointManifestFile) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::ostringstream text;
  for (const auto& name : names) text << sha256_of_file(dir / name) << "  " << name << "\n";
  write_text_atomically(dir / kCheckpointManifestFile, text.str());
}

bool verify_checkpoint_manifest(const fs::path& dir) {
  const fs::path manifest = dir / kCheckpointManifestFile;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return false;
  for (const auto& e : read_manifest(manifest)) check_entry(dir, e);
  return true;
}

bool verify_file_in_manifest(const fs::path& file) {
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  const fs::path manifest = dir / kCheckpointManifestFile;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return false;
  for (const auto& e : read_manifest(manifest)) {
    if (e.name == file.filename().string()) {
      check_entry(dir, e);
      return true;
    }
  }
  return false;
}

}  // namespace trainhook
