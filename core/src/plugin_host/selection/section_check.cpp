#include <trainhook/plugin_host/selection/section_check.hpp>

#include <trainhook/args/plugin_config_sections.hpp>
#include <trainhook/args/training_arguments.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <spdlog/spdlog.h>

namespace trainhook {

void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry,
                                  const std::vector<std::string>& enabled) {
  if (!args.plugin_config.is_object() || args.plugin_config.empty()) return;
  std::vector<std::string> installed = registry.available(TH_KIND_CALLBACK);
  const std::vector<std::string> integrations = registry.available(TH_KIND_INTEGRATION);
  installed.insert(installed.end(), integrations.begin(), integrations.end());
  for (const std::string& w : check_plugin_config_sections(args.plugin_config, enabled, installed))
    spdlog::warn("{}", w);
}

}  // namespace trainhook
