// What a host (the program that loads plugins: the Trainer, or the CLI running
// a plugin's command) offers plugins through th_host. Each host implements it
// as <Who>Services (TrainerServices for the Trainer); the plugin registry turns
// it into one C table (HostTable) per callback instance.
// Implementations must be thread-safe for request_stop() and log().
#pragma once

#include <cstdint>
#include <string>

namespace trainhook {

class ModelAccess;  // model_access.hpp (ABI 1.1)
class Profiler;     // common/profiler.hpp (ABI 1.5)

class HostServices {
 public:
  virtual ~HostServices() = default;
  virtual void log(int32_t level, const std::string& callback, const std::string& message) = 0;
  virtual std::string output_dir() const = 0;
  virtual std::string training_args_json() const = 0;
  virtual void request_stop(const std::string& callback, const std::string& reason) = 0;
  virtual std::string trainer_state_json() const = 0;
  virtual std::string model_description() const = 0;
  virtual std::string run_name() const = 0;
  // Returns an empty string on success, else the reason it was refused.
  virtual std::string set_resume_checkpoint(const std::string& path) = 0;
  // ABI 1.1: the model, learning rate and plugin metrics; nullptr = not offered
  // (the th_host 1.1 functions then refuse with a message).
  virtual ModelAccess* model_access() { return nullptr; }
  // ABI 1.4: true in the helper process that runs an isolated callback
  // (plugin_runner.cpp), where tensor views are refused; th_host.isolated.
  virtual bool isolated() const { return false; }
  // ABI 1.5: the run's profiler under --profile (nullptr: not profiled), into
  // which th_host.profile_span records a plugin's own threads' work.
  virtual Profiler* profiler() const { return nullptr; }
};

}  // namespace trainhook
