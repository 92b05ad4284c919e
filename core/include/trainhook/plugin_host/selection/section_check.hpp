// The run's --plugin_config sections against the plugins the registry found
// (args/plugin_config_sections.hpp states the rule): unknown sections are an
// ArgumentError, sections of installed plugins this run does not enable are
// logged as warnings.
#pragma once

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

}  // namespace trainhook
