// The tensorboard callback's configuration (its plugin_config section), e.g.
//   --plugin_config tensorboard.logging_dir=/tmp/tb --plugin_config tensorboard.queue_size=65536
//   --plugin_config tensorboard.flush_secs=0.5
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace trainhook::tensorboard {

class TensorBoardOptions {
 public:
  // Parses the JSON object given to the callback; throws trainhook::ConfigError
  // naming the key and what was expected for unknown keys or bad values.
  static TensorBoardOptions from_json(const std::string& config_json);

  // Folder for event files; overrides TENSORBOARD_LOGGING_DIR and the default.
  TensorBoardOptions& logging_dir(std::string dir) {
    logging_dir_ = std::move(dir);
    return *this;
  }
  // Log records the writer queue holds before on_log starts dropping (and counting) them.
  TensorBoardOptions& queue_size(size_t n) {
    queue_size_ = n;
    return *this;
  }

  // How often the writer thread appends what was logged to the file (and so
  // the most a crash can lose); 0.01 to 2 seconds.
  TensorBoardOptions& flush_secs(double s) {
    flush_secs_ = s;
    return *this;
  }

  // ABI 1.1 histograms (histograms.hpp): of the weights and/or the gradients,
  // every `histogram_steps` optimizer steps (0 = logging_steps).
  TensorBoardOptions& histograms(bool weights, bool gradients) {
    weight_histograms_ = weights;
    gradient_histograms_ = gradients;
    return *this;
  }
  TensorBoardOptions& histogram_steps(int64_t n) {
    histogram_steps_ = n;
    return *this;
  }
  bool weight_histograms() const noexcept { return weight_histograms_; }
  bool gradient_histograms() const noexcept { return gradient_histograms_; }
  int64_t histogram_steps() const noexcept { return histogram_steps_; }

  const std::string& logging_dir() const noexcept { return logging_dir_; }
  size_t queue_size() const noexcept { return queue_size_; }
  double flush_secs() const noexcept { return flush_secs_; }

 private:
  std::string logging_dir_;
  size_t queue_size_ = 16384;
  double flush_secs_ = 1.0;
  bool weight_histograms_ = false;
  bool gradient_histograms_ = false;
  int64_t histogram_steps_ = 0;
};

}  // namespace trainhook::tensorboard
