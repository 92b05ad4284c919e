// Where plugin libraries are looked for: the search options (--plugin_dir,
// TRAINHOOK_PLUGIN_PATH, the trainer's own folder) and the folders they give,
// in order. The registry (plugin_registry.hpp) scans them; the lock
// (plugin_lock.hpp) pins what they hold. No LibTorch here.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace trainhook {

struct PluginSearchOptions {
  // In search order: --plugin_dir (repeatable), then TRAINHOOK_PLUGIN_PATH
  // (colon-separated, when use_environment), then default_dir.
  std::vector<std::filesystem::path> plugin_dirs;
  bool use_environment = true;
  std::filesystem::path default_dir;  // empty = default_plugin_dir()
  bool allow_unsafe_plugin_paths = false;
  // Two libraries exporting the same name: a library in an earlier folder
  // (a --plugin_dir or TRAINHOOK_PLUGIN_PATH folder) overrides the later one,
  // with a one-line notice, so a development build shadows an installed pack.
  // Two in the same folder are an error unless this is set, then the first in
  // search order wins (with a warning).
  bool allow_duplicate_plugins = false;
};

// <dir of the running executable>/../lib/trainhook/plugins, which holds both in
// the build tree and in an installed prefix.
std::filesystem::path default_plugin_dir();

// The folders searched, in order, each with where it came from ("--plugin_dir",
// "TRAINHOOK_PLUGIN_PATH" or "default"); folders that do not exist included.
std::vector<std::pair<std::filesystem::path, std::string>> plugin_search_dirs(
    const PluginSearchOptions& options);

}  // namespace trainhook
