#include <trainhook/system_stats/system_stats_callback.hpp>

namespace trainhook::system_stats {

SystemStatsCallback::SystemStatsCallback(trainhook::Setup& setup)
    : host_(setup.host()), options_(SystemStatsOptions::from_json(setup.config_json())) {
  if (!host_.has_model_access())
    throw ConfigError("system_stats needs a trainer with ABI 1.1 (plugin metrics in the logs)");
}

void SystemStatsCallback::on_train_begin(trainhook::Event& e) {
  const int64_t n = options_.interval_steps();
  next_due_ = (e.state().global_step / n + 1) * n;
  // The CPU percentage of the first sample is over the time since train begin.
  (void)sampler_.sample(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  if (options_.gpu() && !nvml_tried_) {
    nvml_tried_ = true;
    std::string why_not;
    nvml_ = Nvml::load(why_not);
    if (e.is_world_process_zero()) {
      if (nvml_)
        host_.info("system_stats: " + std::to_string(nvml_->device_count()) + " NVIDIA GPU(s) through NVML");
      else
        host_.info("system_stats: GPU metrics skipped: " + why_not);
    }
  }
}

void SystemStatsCallback::on_step_end(trainhook::Event& e) {
  const int64_t step = e.state().global_step;
  // Added only to a step that logs (DefaultFlowCallback has decided): a value
  // added on another step would land in whatever record comes next.
  if (step < next_due_ || !e.control().should_log) return;
  const int64_t n = options_.interval_steps();
  next_due_ = (step / n + 1) * n;
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  for (const auto& [name, value] : sampler_.sample(now)) host_.add_metric(name, value);
  if (nvml_)
    for (const auto& [name, value] : nvml_->sample()) host_.add_metric(name, value);
}

}  // namespace trainhook::system_stats
