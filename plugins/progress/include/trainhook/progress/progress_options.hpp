// Options of the progress callback, from its plugin_config section:
//   {"min_interval": 0.1, "plain_interval": 30, "plain_percent": 10}
// (seconds between redraws on a terminal; seconds and percent between plain
// progress lines when the output is not a terminal), declared once in table().
// The printer takes none.
#pragma once

#include <trainhook/options.hpp>
#include <trainhook/progress/display.hpp>

#include <string>

namespace trainhook::progress {

class ProgressOptions {
  // Seconds between redraws on a terminal (tqdm's mininterval).
  TRAINHOOK_OPTION(double, min_interval, DisplayOptions{}.min_interval);

 public:
  // Not a terminal: at most this many seconds between progress lines.
  TRAINHOOK_OPTION(double, plain_interval, DisplayOptions{}.plain_interval);

 public:
  // Not a terminal: a progress line each time this many percent are done.
  TRAINHOOK_OPTION(double, plain_percent, DisplayOptions{}.plain_percent);

 public:
  static const OptionTable<ProgressOptions>& table();
  // Throws trainhook::ConfigError naming the key (and the valid keys when it
  // is unknown) for bad input.
  static ProgressOptions from_json(const std::string& config_json) { return table().parse(config_json); }

  // What the display thread is given (bars on stderr, logs on stdout).
  DisplayOptions display_options() const;
};

// The printer's section must be empty; any key is an error.
void check_printer_options(const std::string& config_json);

}  // namespace trainhook::progress
