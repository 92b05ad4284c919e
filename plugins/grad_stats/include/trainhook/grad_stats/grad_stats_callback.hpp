// grad_stats: at the on_pre_optimizer_step of every step that will be logged
// ((global_step + 1) % logging_steps == 0), the L2 norms of the gradients (as the
// optimizer will apply them: reduced over ranks, clipped) and of the weights,
// per parameter or per top-level module, added to that step's log record as
// grad_norm/<name> and weight_norm/<name> (ABI 1.1 add_metric), so TensorBoard,
// MLflow and W&B show them.
#pragma once

#include <trainhook/grad_stats/grad_stats_options.hpp>

#include <trainhook/plugin.hpp>

#include <map>
#include <string>

namespace trainhook::grad_stats {

class GradStatsCallback final : public trainhook::Callback {
 public:
  explicit GradStatsCallback(trainhook::Setup& setup);
  GradStatsCallback(const trainhook::Host& host, const GradStatsOptions& options);

  void on_pre_optimizer_step(trainhook::Event& e) override;

  // The norms of the last logged step (name -> value), for tests.
  const std::map<std::string, double>& last() const noexcept { return last_; }

 private:
  void add_norms(Tensors kind, const std::string& prefix);

  trainhook::Host host_;
  GradStatsOptions options_;
  std::map<std::string, double> last_;
};

}  // namespace trainhook::grad_stats
