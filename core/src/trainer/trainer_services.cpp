// TrainerServices: the trainer side of th_host (see trainer_services.hpp).
#include <trainhook/trainer/trainer_services.hpp>

#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>

#include <trainhook/secret_keys.hpp>

#include <spdlog/spdlog.h>
#include <filesystem>

namespace trainhook {

TrainerServices::TrainerServices(Config config, const TrainerState& state, CallbackHandler& handler)
    : config_(std::move(config)), state_(state), handler_(handler) {}

void TrainerServices::log(int32_t level, const std::string& callback, const std::string& message) {
  const auto lvl = level <= TH_LOG_TRACE   ? spdlog::level::trace
                   : level == TH_LOG_DEBUG ? spdlog::level::debug
                   : level == TH_LOG_INFO  ? spdlog::level::info
                   : level == TH_LOG_WARN  ? spdlog::level::warn
                                           : spdlog::level::err;
  // A plugin may print a URL it was configured with (MLFLOW_TRACKING_URI): its password never reaches a log.
  spdlog::log(lvl, "[{}] {}", callback, mask_url_passwords(message));
}

void TrainerServices::request_stop(const std::string& callback, const std::string& reason) {
  handler_.request_stop(callback + ": " + reason);
}

std::string TrainerServices::trainer_state_json() const { return to_json(state_).dump(); }

std::string TrainerServices::set_resume_checkpoint(const std::string& path) {
  if (train_began_) {
    return "set_resume_checkpoint: too late, training has already begun (call it before on_train_begin, "
           "e.g. in on_init_end)";
  }
  const std::filesystem::path dir(path);
  if (!std::filesystem::is_directory(dir)) return "set_resume_checkpoint: '" + path + "' is not a folder";
  if (!std::filesystem::exists(dir / kTrainerStateFile)) {
    return "set_resume_checkpoint: '" + path + "' has no " + kTrainerStateFile +
           " (not a complete checkpoint)";
  }
  resume_checkpoint_ = path;
  return "";
}

std::optional<std::string> TrainerServices::take_resume_checkpoint() {
  auto r = std::move(resume_checkpoint_);
  resume_checkpoint_.reset();
  return r;
}

}  // namespace trainhook
