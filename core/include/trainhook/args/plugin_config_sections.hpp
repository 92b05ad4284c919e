// A --plugin_config section that no callback of the run reads is a mistake
// (a typo such as `early_stoping.patience=5`, or a plugin left out of
// --report_to/--callbacks): the trainer checks the sections against the
// callbacks it enabled before training starts.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trainhook {

class PluginRegistry;

// `enabled`: the callbacks this run creates (integrations of report_to,
// callbacks, the progress display). `installed`: every callback the plugin
// search found (for the did-you-mean). Throws ArgumentError naming the section.
void check_plugin_config_sections(const nlohmann::json& plugin_config,
                                  const std::vector<std::string>& enabled,
                                  const std::vector<std::string>& installed);

// The same for a run: enabled = the integrations report_to resolves to, the
// callbacks, and the progress display (progress, or printer with
// disable_tqdm); installed = every callback the registry loaded.
void check_plugin_config_sections(const TrainingArguments& args, const PluginRegistry& registry);

}  // namespace trainhook
