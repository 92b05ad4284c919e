// TrainerServices: the Trainer's HostServices, what plugins may ask of a run
// (log, output_dir, arguments, state, a stop, the checkpoint to resume from).
// Torch-free so it is tested in the sanitizer build.
//
// Thread-safety: log() and request_stop() may be called from plugin worker
// threads; everything else is called on the training thread.
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>

#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace trainhook {

class TrainerServices final : public HostServices {
 public:
  struct Config {
    std::string output_dir;
    std::string training_args_json;
    std::string run_name;
    std::string model_description;
    ModelAccess* model_access = nullptr;  // ABI 1.1; owned by the trainer
    Profiler* profiler = nullptr;         // ABI 1.5, --profile; owned by the trainer
  };
  // `state` and `handler` must outlive the host (the Trainer owns all three).
  TrainerServices(Config config, const TrainerState& state, CallbackHandler& handler);

  void log(int32_t level, const std::string& callback, const std::string& message) override;
  std::string output_dir() const override { return config_.output_dir; }
  std::string training_args_json() const override { return config_.training_args_json; }
  void request_stop(const std::string& callback, const std::string& reason) override;
  std::string trainer_state_json() const override;
  std::string model_description() const override { return config_.model_description; }
  std::string run_name() const override { return config_.run_name; }
  ModelAccess* model_access() override { return config_.model_access; }
  Profiler* profiler() const override { return config_.profiler; }
  // Accepted until train_begins(); the folder must hold trainer_state.json.
  std::string set_resume_checkpoint(const std::string& path) override;

  // The trainer calls this before on_train_begin; later requests are refused.
  void train_begins() noexcept { train_began_ = true; }
  // The checkpoint a plugin asked for, if any (cleared by the call).
  std::optional<std::string> take_resume_checkpoint();

 private:
  Config config_;
  const TrainerState& state_;
  CallbackHandler& handler_;
  bool train_began_ = false;
  std::optional<std::string> resume_checkpoint_;
};

}  // namespace trainhook
