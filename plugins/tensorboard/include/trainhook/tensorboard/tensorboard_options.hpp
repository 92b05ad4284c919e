// The tensorboard callback's configuration (its plugin_config section), e.g.
//   --plugin_config tensorboard.logging_dir=/tmp/tb --plugin_config tensorboard.queue_size=65536
//   --plugin_config tensorboard.flush_secs=0.5
#pragma once

#include <cstddef>
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

  const std::string& logging_dir() const noexcept { return logging_dir_; }
  size_t queue_size() const noexcept { return queue_size_; }
  double flush_secs() const noexcept { return flush_secs_; }

 private:
  std::string logging_dir_;
  size_t queue_size_ = 16384;
  double flush_secs_ = 1.0;
};

}  // namespace trainhook::tensorboard
