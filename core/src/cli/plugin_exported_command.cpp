// `trainhook <command> ...` for commands that plugin libraries export
// (th_command_info). Plugins are searched in TRAINHOOK_PLUGIN_PATH and the
// default folder; the command gets a th_host whose log goes to stderr/stdout
// through spdlog and whose training-run services are empty.
#include <trainhook/cli/commands.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/strings.hpp>

#include <spdlog/spdlog.h>

#include <filesystem>

namespace trainhook::cli {
namespace {

// Host services outside a training run.
class CommandHost final : public HostServices {
 public:
  void log(int32_t level, const std::string& who, const std::string& message) override {
    const auto lvl = level <= TH_LOG_TRACE   ? spdlog::level::trace
                     : level == TH_LOG_DEBUG ? spdlog::level::debug
                     : level == TH_LOG_INFO  ? spdlog::level::info
                     : level == TH_LOG_WARN  ? spdlog::level::warn
                                             : spdlog::level::err;
    spdlog::log(lvl, "[{}] {}", who, message);
  }
  std::string output_dir() const override { return std::filesystem::current_path().string(); }
  std::string training_args_json() const override { return "{}"; }
  void request_stop(const std::string&, const std::string&) override {}  // nothing to stop
  std::string trainer_state_json() const override { return "{}"; }
  std::string model_description() const override { return {}; }
  std::string run_name() const override { return {}; }
  std::string set_resume_checkpoint(const std::string&) override {
    return "set_resume_checkpoint: not available outside `trainhook train`";
  }
};

PluginRegistry quiet_registry() {
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);
  try {
    PluginRegistry r{PluginSearchOptions{}};
    spdlog::set_level(level);
    return r;
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> plugin_command_list() {
  std::vector<std::pair<std::string, std::string>> out;
  try {
    const PluginRegistry r = quiet_registry();
    for (const auto& lib : r.libraries())
      for (const auto& c : lib.commands)
        if (c.shadowed_by.empty()) out.emplace_back(c.name, c.description);
  } catch (const std::exception&) {
    // --help must work even when the plugin folders are broken; `trainhook plugins` says why.
  }
  return out;
}

int run_plugin_command(const std::string& command, const std::vector<std::string>& args,
                       const std::vector<std::string>& builtin_commands) {
  const PluginRegistry r = quiet_registry();
  if (!r.has_command(command)) {
    std::vector<std::string> all = builtin_commands;
    for (const auto& c : r.command_names()) all.push_back(c);
    std::string msg = "unknown command '" + command + "'";
    if (const std::string close = closest_name(command, all); !close.empty())
      msg += " (did you mean '" + close + "'?)";
    throw std::invalid_argument(msg + "; commands: " + strings::join(all));
  }
  CommandHost host;
  return r.run_command(command, args, host);
}

}  // namespace trainhook::cli
