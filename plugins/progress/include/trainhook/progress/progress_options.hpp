// Options of the progress callback, from its plugin_config section:
//   {"min_interval": 0.1, "plain_interval": 30, "plain_percent": 10}
// (seconds between redraws on a terminal; seconds and percent between plain
// progress lines when the output is not a terminal). The printer takes none.
#pragma once

#include <trainhook/progress/display.hpp>

#include <string>

namespace trainhook::progress {

// Throws trainhook::ConfigError naming the key (and the valid keys when it is
// unknown) for bad input. `callback` names the section in messages.
DisplayOptions progress_options_from_json(const std::string& config_json);
// The printer's section must be empty; any key is an error.
void check_printer_options(const std::string& config_json);

}  // namespace trainhook::progress
