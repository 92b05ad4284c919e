#include <trainhook/args/plugin_config_sections.hpp>

#include <trainhook/args/argument_parser.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>

namespace trainhook {

std::vector<std::string> check_plugin_config_sections(const nlohmann::json& plugin_config,
                                                      const std::vector<std::string>& enabled,
                                                      const std::vector<std::string>& installed) {
  std::vector<std::string> warnings;
  if (!plugin_config.is_object()) return warnings;  // validate() has refused anything else
  for (const auto& [name, section] : plugin_config.items()) {
    if (std::find(enabled.begin(), enabled.end(), name) != enabled.end()) continue;
    std::string message = "--plugin_config: the section '" + name + "' is read by no callback of this run";
    const bool is_installed = std::find(installed.begin(), installed.end(), name) != installed.end();
    if (is_installed) {
      warnings.push_back(message + " ('" + name +
                         "' is installed but not enabled; its settings apply when --report_to or "
                         "--callbacks names it)");
      continue;
    }
    std::vector<std::string> candidates = enabled;
    candidates.insert(candidates.end(), installed.begin(), installed.end());
    const std::string close = closest_name(name, candidates);
    message += close.empty() ? std::string(" and no plugin of that name is installed")
                             : " (did you mean '" + close + "'?)";
    message += "; callbacks of this run: " + (enabled.empty() ? std::string("none") : strings::join(enabled));
    throw ArgumentError(message);
  }
  return warnings;
}

}  // namespace trainhook
