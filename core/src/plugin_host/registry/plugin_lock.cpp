// plugin_lock_entries (trainhook/plugin_host/registry/plugin_lock.hpp): the lock lines
// of plugin files, for `trainhook plugins lock`. Reads names and bytes only.
#include <trainhook/plugin_host/registry/plugin_lock.hpp>

#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

namespace trainhook {
namespace fs = std::filesystem;

namespace {

bool is_plugin_file(const fs::path& p) { return !plugin_name_of_file(p.filename().string()).empty(); }

std::vector<fs::path> plugin_files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file(ec) && is_plugin_file(entry.path())) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

fs::path canonical_or_normal(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

// The trainer's own digests (file name -> sha256), empty when absent or unreadable.
std::map<std::string, std::string> trainer_digests(const fs::path& own_dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  const fs::path file = own_dir / kTrainerPluginDigests;
  if (!fs::exists(file, ec)) return out;
  try {
    for (const auto& e : read_sha256sum_file(file)) out[e.name] = e.hash;
  } catch (const std::runtime_error&) {
    out.clear();  // the registry reports it; here nothing counts as covered
  }
  return out;
}

}  // namespace

std::vector<PluginLockEntry> plugin_lock_entries(const std::vector<fs::path>& paths,
                                                 const PluginSearchOptions& options) {
  const auto dirs = plugin_search_dirs(options);
  const fs::path own_dir = canonical_or_normal(dirs.back().first);  // the default folder
  const auto own = trainer_digests(own_dir);

  std::vector<fs::path> files;
  if (paths.empty()) {
    for (const auto& [dir, origin] : dirs) {
      std::error_code ec;
      if (!fs::exists(dir, ec)) {
        if (origin == "--plugin_dir")
          throw PluginError("--plugin_dir " + dir.string() + ": no such file or folder");
        continue;
      }
      if (fs::is_directory(dir, ec)) {
        for (auto& f : plugin_files_in(dir)) files.push_back(std::move(f));
      } else {
        files.push_back(dir);
      }
    }
  } else {
    for (const auto& p : paths) {
      std::error_code ec;
      if (!fs::exists(p, ec)) throw PluginError(p.string() + ": no such file or folder");
      if (fs::is_directory(p, ec)) {
        for (auto& f : plugin_files_in(p)) files.push_back(std::move(f));
      } else if (!is_plugin_file(p)) {
        throw PluginError(p.string() + ": not a plugin library's name (the trainer loads only " +
                          plugin_file_glob() + ")");
      } else {
        files.push_back(p);
      }
    }
  }

  std::vector<PluginLockEntry> entries;
  std::set<fs::path> seen;
  for (const auto& f : files) {
    const fs::path canonical = canonical_or_normal(f);
    if (!seen.insert(canonical).second) continue;
    PluginLockEntry e;
    e.file = f;
    try {
      e.sha256 = sha256_of_file(canonical);
    } catch (const std::runtime_error& err) {
      throw PluginError(err.what());
    }
    const std::string name = canonical.filename().string();
    e.line = e.sha256 + "  " + name;
    const auto it = own.find(name);
    e.trainers_own = canonical.parent_path() == own_dir && it != own.end() && it->second == e.sha256;
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace trainhook
