// trainhook --version / trainhook version: what a bug report needs to say which
// trainer this is: the package version, the plugin ABI it speaks, the LibTorch
// it was built with, and the folders it searches for plugins.
#include <trainhook/cli/commands.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <trainhook/abi.h>
#include <trainhook/common/package_version.hpp>
#include <torch/version.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace trainhook::cli {

int version_command(const std::vector<std::string>& args, const std::string& /*program_path*/) {
  if (!args.empty())
    throw std::invalid_argument("takes no arguments (got '" + args.front() + "'); usage: trainhook --version");
  std::printf("trainhook %s\n", package_version());
  std::printf("plugin ABI %d.%d\n", TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR);
  std::printf("LibTorch %s\n", TORCH_VERSION);
  std::printf("plugin search path:\n");
  for (const auto& [dir, origin] : plugin_search_dirs(PluginSearchOptions{})) {
    std::error_code ec;
    std::printf("  %s (%s%s)\n", dir.string().c_str(), origin.c_str(),
                std::filesystem::is_directory(dir, ec) ? "" : ", absent");
  }
  return 0;
}

}  // namespace trainhook::cli
