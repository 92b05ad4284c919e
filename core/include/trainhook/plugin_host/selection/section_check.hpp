// The run's --plugin_config sections against the plugins the registry found
// (args/plugin_config_sections.hpp states the rule): unknown sections are an
// ArgumentError, sections of installed plugins this run does not enable are
// logged as warnings.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trainhook {

struct TrainingArguments;
class PluginRegistry;

// enabled = what this run enables (CallbackSelection::enabled(), from
// callback_resolver.hpp); installed = every callback and integration the
// registry found.
void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry,
                                  const std::vector<std::string>& enabled);
// The same rule for any host (the Python bridge): throws ArgumentError for an
// unknown section, returns the warnings instead of logging them.
std::vector<std::string> plugin_config_section_warnings(const nlohmann::json& plugin_config,
                                                        const PluginRegistry& registry,
                                                        const std::vector<std::string>& enabled);

}  // namespace trainhook
