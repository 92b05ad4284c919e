// The run's --plugin_config sections against the plugins the registry found
// (args/plugin_config_sections.hpp states the rule): unknown sections are an
// ArgumentError, sections of installed plugins this run does not enable are
// logged as warnings.
#pragma once

namespace trainhook {

struct TrainingArguments;
class PluginRegistry;

// enabled = the integrations report_to resolves to, the callbacks, and the
// progress display (progress, or printer with disable_tqdm); installed =
// every callback and integration the registry loaded.
void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry);

}  // namespace trainhook
