// trainhook plugins [--plugin_dir D]... [--allow_unsafe_plugin_paths]
// Lists every plugin library found in search order, what each exports, and why
// any file was refused. Duplicates are shown (not fatal) so they can be fixed.
#include <trainhook/cli/commands.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/plugin_host/plugin_registry.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <stdexcept>

namespace trainhook::cli {
namespace {

void plugins_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: trainhook plugins [--plugin_dir DIR]... [--allow_unsafe_plugin_paths]\n"
      "Lists the plugin libraries found (--plugin_dir folders, then TRAINHOOK_PLUGIN_PATH, then the\n"
      "default folder), their callbacks and commands, and the reason for every refused file.\n");
}

}  // namespace

int plugins_command(const std::vector<std::string>& args, const std::string& /*program_path*/) {
  PluginSearchOptions options;
  options.allow_duplicate_plugins = true;  // listed with a DUPLICATE mark instead of failing
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      plugins_usage(stdout);
      return 0;
    }
    if (a == "--plugin_dir") {
      if (i + 1 >= args.size()) throw std::invalid_argument("--plugin_dir needs a folder");
      options.plugin_dirs.emplace_back(args[++i]);
    } else if (a.rfind("--plugin_dir=", 0) == 0) {
      options.plugin_dirs.emplace_back(a.substr(std::string("--plugin_dir=").size()));
    } else if (a == "--allow_unsafe_plugin_paths") {
      options.allow_unsafe_plugin_paths = true;
    } else {
      std::string msg = "unknown argument '" + a + "'";
      const std::string close = closest_name(a, {"--plugin_dir", "--allow_unsafe_plugin_paths", "--help"});
      if (!close.empty()) msg += " (did you mean '" + close + "'?)";
      throw std::invalid_argument(msg + "; see trainhook plugins --help");
    }
  }
  // The listing already says what was loaded or refused; keep the log quiet.
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);
  try {
    const PluginRegistry registry(options);
    spdlog::set_level(level);
    std::fputs(registry.describe().c_str(), stdout);
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
  return 0;
}

}  // namespace trainhook::cli
