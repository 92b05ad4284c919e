// The tensorboard callback's configuration (its plugin_config section; the keys
// are declared once, in table()), e.g.
//   --plugin_config tensorboard.logging_dir=/tmp/tb --plugin_config tensorboard.queue_size=65536
//   --plugin_config tensorboard.flush_secs=0.5
#pragma once

#include <trainhook/options.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace trainhook::tensorboard {

class TensorBoardOptions {
  // Folder for event files; from plugin_config, else TENSORBOARD_LOGGING_DIR;
  // empty: <output_dir>/runs/<date>_<host> (log_dir.hpp).
  TRAINHOOK_OPTION(std::string, logging_dir, "");

 public:
  // Log records the writer queue holds before on_log starts dropping (and counting) them.
  TRAINHOOK_OPTION(int64_t, queue_size, 16384);

 public:
  // How often the writer thread appends what was logged to the file (and so
  // the most a crash can lose); 0.01 to 2 seconds.
  TRAINHOOK_OPTION(double, flush_secs, 1.0);

 public:
  // ABI 1.1 histograms (histograms.hpp): "weights" and/or "gradients", every
  // `histogram_steps` optimizer steps (0 = logging_steps).
  TRAINHOOK_OPTION(std::vector<std::string>, histograms, {});

 public:
  TRAINHOOK_OPTION(int64_t, histogram_steps, 0);

 public:
  bool weight_histograms() const { return has_histogram("weights"); }
  bool gradient_histograms() const { return has_histogram("gradients"); }

  static const OptionTable<TensorBoardOptions>& table();
  // Parses the JSON object given to the callback; throws trainhook::ConfigError
  // naming the key and what was expected for unknown keys or bad values.
  static TensorBoardOptions from_json(const std::string& config_json) { return table().parse(config_json); }

 private:
  bool has_histogram(const char* what) const {
    return std::find(histograms_.begin(), histograms_.end(), what) != histograms_.end();
  }
};

}  // namespace trainhook::tensorboard
