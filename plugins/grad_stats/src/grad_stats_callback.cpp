#include <trainhook/grad_stats/grad_stats_callback.hpp>

#include <trainhook/support/tensor_math.hpp>

#include <cmath>
#include <vector>

namespace trainhook::grad_stats {

GradStatsCallback::GradStatsCallback(trainhook::Setup& setup)
    : GradStatsCallback(setup.host(), GradStatsOptions::from_json(setup.config_json())) {}

GradStatsCallback::GradStatsCallback(const trainhook::Host& host, const GradStatsOptions& options)
    : host_(host), options_(options) {
  if (!host_.has_model_access()) throw ConfigError("grad_stats needs a trainer with ABI 1.1 (tensor views)");
}

void GradStatsCallback::add_norms(Tensors kind, const std::string& prefix) {
  // Sums of squares per group, in the module's order of first appearance.
  std::vector<std::pair<std::string, double>> groups;
  for (const TensorView t : host_.tensors(kind)) {
    std::string name(t.name());
    if (options_.per_module()) name = name.substr(0, name.find('.'));
    if (groups.empty() || groups.back().first != name) groups.emplace_back(name, 0.0);
    groups.back().second += support::sum_squares(t);
  }
  for (const auto& [name, ss] : groups) {
    const double norm = std::sqrt(ss);
    last_[prefix + name] = norm;
    if (std::isfinite(norm)) host_.add_metric(prefix + name, norm);
  }
}

void GradStatsCallback::on_pre_optimizer_step(trainhook::Event& e) {
  const th_state& st = e.state();
  if (st.logging_steps <= 0 || (st.global_step + 1) % st.logging_steps != 0) return;
  last_.clear();
  if (options_.gradients()) add_norms(Tensors::gradients, "grad_norm/");
  if (options_.weights()) add_norms(Tensors::parameters, "weight_norm/");
}

}  // namespace trainhook::grad_stats
