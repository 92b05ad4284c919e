// Options of the progress callback, from its plugin_config section:
//   {"min_interval": 0.1, "plain_interval": 30, "plain_percent": 10}
// (seconds between redraws on a terminal; seconds and percent between plain
// progress lines when the output is not a terminal). The printer takes none.
#pragma once

#include <trainhook/progress/display.hpp>

#include <string>

namespace trainhook::progress {

class ProgressOptions {
 public:
  // Throws trainhook::ConfigError naming the key (and the valid keys when it
  // is unknown) for bad input.
  static ProgressOptions from_json(const std::string& config_json);

  // Seconds between redraws on a terminal (tqdm's mininterval).
  ProgressOptions& min_interval(double s) {
    min_interval_ = s;
    return *this;
  }
  // Not a terminal: at most this many seconds between progress lines.
  ProgressOptions& plain_interval(double s) {
    plain_interval_ = s;
    return *this;
  }
  // Not a terminal: a progress line each time this many percent are done.
  ProgressOptions& plain_percent(double p) {
    plain_percent_ = p;
    return *this;
  }
  double min_interval() const noexcept { return min_interval_; }
  double plain_interval() const noexcept { return plain_interval_; }
  double plain_percent() const noexcept { return plain_percent_; }

  // What the display thread is given (bars on stderr, logs on stdout).
  DisplayOptions display_options() const;

 private:
  double min_interval_ = DisplayOptions{}.min_interval;
  double plain_interval_ = DisplayOptions{}.plain_interval;
  double plain_percent_ = DisplayOptions{}.plain_percent;
};
// The printer's section must be empty; any key is an error.
void check_printer_options(const std::string& config_json);

}  // namespace trainhook::progress
