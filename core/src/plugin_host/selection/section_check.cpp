#include <trainhook/plugin_host/selection/section_check.hpp>

#include <trainhook/args/plugin_config_sections.hpp>
#include <trainhook/args/training_arguments.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <spdlog/spdlog.h>

namespace trainhook {

std::vector<std::string> plugin_config_section_warnings(const nlohmann::json& plugin_config,
                                                        const PluginRegistry& registry,
                                                        const std::vector<std::string>& enabled) {
  if (!plugin_config.is_object() || plugin_config.empty()) return {};
  std::vector<std::string> installed = registry.available(TH_KIND_CALLBACK);
  const std::vector<std::string> integrations = registry.available(TH_KIND_INTEGRATION);
  installed.insert(installed.end(), integrations.begin(), integrations.end());
  return check_plugin_config_sections(plugin_config, enabled, installed);
}

void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry,
                                  const std::vector<std::string>& enabled) {
  for (const std::string& w : plugin_config_section_warnings(args.plugin_config, registry, enabled))
    spdlog::warn("{}", w);
}

}  // namespace trainhook
