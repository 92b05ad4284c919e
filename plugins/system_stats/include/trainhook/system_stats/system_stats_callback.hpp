// system_stats (--callbacks system_stats): the process's memory and CPU use,
// the cgroup memory limit and, with an NVIDIA driver, each GPU's utilisation,
// memory and power, added to the log record of the first logging step at or
// after every multiple of interval_steps (Host::add_metric: log_history and
// every integration). Not due, a step costs one comparison; /proc is read
// only when a sample is taken. Each process samples itself (only world rank
// 0's log_history is written).
#pragma once

#include <trainhook/system_stats/nvml.hpp>
#include <trainhook/system_stats/process_sampler.hpp>
#include <trainhook/system_stats/system_stats_options.hpp>

#include <trainhook/plugin.hpp>

#include <chrono>
#include <memory>

namespace trainhook::system_stats {

class SystemStatsCallback final : public trainhook::Callback {
 public:
  explicit SystemStatsCallback(trainhook::Setup& setup);

  void on_train_begin(trainhook::Event& e) override;
  void on_step_end(trainhook::Event& e) override;

 private:
  trainhook::Host host_;
  SystemStatsOptions options_;
  ProcessSampler sampler_;
  std::unique_ptr<Nvml> nvml_;
  bool nvml_tried_ = false;
  int64_t next_due_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace trainhook::system_stats
