// The plugin search path (plugin_search.hpp): the folders given, the
// environment's, then the trainer's own.
#include <trainhook/plugin_host/registry/plugin_search.hpp>

#include <boost/dll/runtime_symbol_info.hpp>

#include <cstdlib>
#include <sstream>
#include <system_error>

#ifndef TRAINHOOK_PLUGIN_REL_DIR
#define TRAINHOOK_PLUGIN_REL_DIR "lib/trainhook/plugins"
#endif

namespace trainhook {
namespace fs = std::filesystem;

fs::path default_plugin_dir() {
  std::error_code ec;
  const fs::path bin = boost::dll::program_location(ec).parent_path();
  if (ec) return fs::path(TRAINHOOK_PLUGIN_REL_DIR);
  const fs::path installed = (bin / ".." / TRAINHOOK_PLUGIN_REL_DIR).lexically_normal();
  // The build tree always uses lib/trainhook/plugins; an install may use lib64/...
  const fs::path build_tree = (bin / ".." / "lib" / "trainhook" / "plugins").lexically_normal();
  return fs::is_directory(installed, ec) ? installed : build_tree;
}

std::vector<std::pair<fs::path, std::string>> plugin_search_dirs(const PluginSearchOptions& options) {
  std::vector<std::pair<fs::path, std::string>> dirs;
  for (const auto& d : options.plugin_dirs) dirs.emplace_back(d, "--plugin_dir");
  if (options.use_environment) {
    if (const char* env = std::getenv("TRAINHOOK_PLUGIN_PATH")) {
      std::stringstream ss(env);
      std::string item;
      while (std::getline(ss, item, ':'))
        if (!item.empty()) dirs.emplace_back(item, "TRAINHOOK_PLUGIN_PATH");
    }
  }
  dirs.emplace_back(options.default_dir.empty() ? default_plugin_dir() : options.default_dir, "default");
  return dirs;
}

}  // namespace trainhook
