#include <trainhook/optim/grad_scaler.hpp>

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace trainhook {

GradScaler::GradScaler(bool enabled, GradScalerOptions options)
    : enabled_(enabled), options_(options), scale_(options.init_scale) {
  if (!(options.init_scale > 0) || !std::isfinite(options.init_scale))
    throw std::invalid_argument("GradScaler: init_scale must be a finite value > 0");
  if (!(options.growth_factor > 1)) throw std::invalid_argument("GradScaler: growth_factor must be > 1");
  if (!(options.backoff_factor > 0 && options.backoff_factor < 1))
    throw std::invalid_argument("GradScaler: backoff_factor must be in (0, 1)");
  if (options.growth_interval < 1) throw std::invalid_argument("GradScaler: growth_interval must be >= 1");
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const { return enabled_ ? loss * scale_ : loss; }

bool GradScaler::unscale(const std::vector<at::Tensor>& parameters) const {
  if (!enabled_) return false;
  const double inverse = 1.0 / scale_;
  // One flag tensor on the gradients' device, read once: no sync per parameter.
  at::Tensor found;
  for (const auto& p : parameters) {
    at::Tensor g = p.grad();
    if (!g.defined()) continue;
    g.mul_(inverse);
    at::Tensor bad = at::logical_not(at::isfinite(g)).any();
    found = found.defined() ? at::logical_or(found, bad) : bad;
  }
  return found.defined() && found.item<bool>();
}

void GradScaler::update(bool found_inf) {
  if (!enabled_) return;
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    ++skipped_steps_;
    return;
  }
  if (++growth_tracker_ < options_.growth_interval) return;
  growth_tracker_ = 0;
  // torch keeps the scale a float32 tensor and does not grow it to inf.
  const double grown = scale_ * options_.growth_factor;
  if (grown <= static_cast<double>(std::numeric_limits<float>::max())) scale_ = grown;
}

nlohmann::json GradScaler::state() const {
  return {{"scale", scale_},
          {"growth_factor", options_.growth_factor},
          {"backoff_factor", options_.backoff_factor},
          {"growth_interval", options_.growth_interval},
          {"_growth_tracker", growth_tracker_},
          {"skipped_steps", skipped_steps_}};
}

void GradScaler::load_state(const nlohmann::json& state, const std::string& source) {
  auto number = [&](const char* key) -> const nlohmann::json& {
    if (!state.is_object() || !state.contains(key) || !state.at(key).is_number())
      throw std::runtime_error(source + ": key '" + key + "' must be a number (a GradScaler state)");
    return state.at(key);
  };
  const double scale = number("scale").get<double>();
  const int64_t tracker = number("_growth_tracker").get<int64_t>();
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::runtime_error(source + ": key 'scale' must be a finite value > 0, not " +
                             std::to_string(scale));
  if (tracker < 0) throw std::runtime_error(source + ": key '_growth_tracker' must be >= 0");
  scale_ = scale;
  growth_tracker_ = tracker;
  // Older or torch-written states have no count: it restarts at 0.
  skipped_steps_ = state.contains("skipped_steps") ? number("skipped_steps").get<int64_t>() : 0;
}

}  // namespace trainhook
