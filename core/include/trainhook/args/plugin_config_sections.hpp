// A --plugin_config section that no callback of the run reads: a section
// named after no installed plugin is a mistake (a typo such as
// `early_stoping.patience=5`) and an error; a section of a plugin that is
// installed but not enabled in this run is a warning, since a team's shared
// config file holds settings for every integration and report_to picks per
// run. The trainer checks before training starts (plugin_host/selection/section_check.hpp
// runs this against the registry).
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace trainhook {

// `enabled`: the callbacks this run creates (integrations of report_to,
// callbacks, the progress display). `installed`: every callback the plugin
// search found (for the did-you-mean). Throws ArgumentError naming an unknown
// section; returns one warning per section of an installed, not enabled plugin.
std::vector<std::string> check_plugin_config_sections(const nlohmann::json& plugin_config,
                                                      const std::vector<std::string>& enabled,
                                                      const std::vector<std::string>& installed);

}  // namespace trainhook
