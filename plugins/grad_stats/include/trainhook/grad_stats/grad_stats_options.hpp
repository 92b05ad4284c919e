// Options of the grad_stats callback ({"per": "module", "gradients": true, "weights": true}).
#pragma once

#include <string>

namespace trainhook::grad_stats {

class GradStatsOptions {
 public:
  // true: one value per top-level module (the first part of the dotted name);
  // false: one per parameter.
  GradStatsOptions& per_module(bool m) {
    per_module_ = m;
    return *this;
  }
  GradStatsOptions& gradients(bool g) {
    gradients_ = g;
    return *this;
  }
  GradStatsOptions& weights(bool w) {
    weights_ = w;
    return *this;
  }
  bool per_module() const noexcept { return per_module_; }
  bool gradients() const noexcept { return gradients_; }
  bool weights() const noexcept { return weights_; }

  static GradStatsOptions from_json(const std::string& config_json);

 private:
  bool per_module_ = true;
  bool gradients_ = true;
  bool weights_ = true;
};

}  // namespace trainhook::grad_stats
