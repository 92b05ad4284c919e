#include <trainhook/args/plugin_config_sections.hpp>

#include <trainhook/args/argument_parser.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/plugin_host/plugin_registry.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>

namespace trainhook {

void check_plugin_config_sections(const nlohmann::json& plugin_config,
                                  const std::vector<std::string>& enabled,
                                  const std::vector<std::string>& installed) {
  if (!plugin_config.is_object()) return;  // validate() has refused anything else
  for (const auto& [name, section] : plugin_config.items()) {
    if (std::find(enabled.begin(), enabled.end(), name) != enabled.end()) continue;
    std::string message = "--plugin_config: the section '" + name + "' is read by no callback of this run";
    const bool is_installed = std::find(installed.begin(), installed.end(), name) != installed.end();
    if (is_installed) {
      message += " ('" + name + "' is installed but not enabled: add it to --report_to or --callbacks, or " +
                 "remove the section)";
    } else {
      std::vector<std::string> candidates = enabled;
      candidates.insert(candidates.end(), installed.begin(), installed.end());
      const std::string close = closest_name(name, candidates);
      message += close.empty() ? std::string(" and no plugin of that name is installed")
                               : " (did you mean '" + close + "'?)";
    }
    message += "; callbacks of this run: " + (enabled.empty() ? std::string("none") : strings::join(enabled));
    throw ArgumentError(message);
  }
}

void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry) {
  if (!args.plugin_config.is_object() || args.plugin_config.empty()) return;
  std::vector<std::string> enabled = registry.resolve_report_to(args.report_to);
  enabled.insert(enabled.end(), args.callbacks.begin(), args.callbacks.end());
  enabled.push_back(args.disable_tqdm ? "printer" : "progress");
  std::vector<std::string> installed = registry.available(TH_KIND_CALLBACK);
  const std::vector<std::string> integrations = registry.available(TH_KIND_INTEGRATION);
  installed.insert(installed.end(), integrations.begin(), integrations.end());
  check_plugin_config_sections(args.plugin_config, enabled, installed);
}

}  // namespace trainhook
