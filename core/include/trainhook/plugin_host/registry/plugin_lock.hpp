// Plugin pinning as a site and a pack see it (TRAINHOOK_PLUGIN_LOCK; the
// registry applies it: core/src/plugin_host/registry/plugin_lock_file.hpp).
//
// A site's lock file lists third-party libraries only: the trainer's own
// plugins are covered by the digests written next to them when the trainer was
// built or installed (<plugin folder>/trainhook-plugins.sha256), and are
// checked against those. Lock lines are sha256sum's ("<sha256>  <name>"); a
// name without '/' is a file name, matched in whatever folder of the search
// path the library is found, so a pack ships its lines ready to append
// (`trainhook plugins lock`). A name with '/' is a path, absolute or relative
// to the lock file's folder.
#pragma once

#include <trainhook/plugin_host/registry/plugin_search.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook {

// The trainer's own digests, in its default plugin folder: written by the
// build (the trainhook_plugins target) and by `cmake --install`
// (cmake/TrainhookPluginDigests.cmake), in sha256sum's format.
inline constexpr char kTrainerPluginDigests[] = "trainhook-plugins.sha256";

struct PluginLockEntry {
  std::filesystem::path file;  // as found or given
  std::string sha256;
  std::string line;           // "<sha256>  <file name>": what a lock file takes
  bool trainers_own = false;  // in the trainer's plugin folder with the digest its
                              // trainhook-plugins.sha256 lists: covered without a line
};

// One entry per plugin library in `paths` (a file, or a folder: each plugin
// file in it), or, with no paths, per plugin file on the search path of
// `options` (--plugin_dir, TRAINHOOK_PLUGIN_PATH, the default folder). Only
// file names and bytes are read; no library is loaded. Throws PluginError
// naming a path that does not exist or whose file name is not a plugin's.
std::vector<PluginLockEntry> plugin_lock_entries(const std::vector<std::filesystem::path>& paths,
                                                 const PluginSearchOptions& options);

}  // namespace trainhook
