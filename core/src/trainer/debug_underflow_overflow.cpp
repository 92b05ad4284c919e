#include "debug_underflow_overflow.hpp"

#include <trainhook/args/training_arguments.hpp>

#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trainhook {
namespace {

constexpr double kNone = -1;  // abs min/max of a missing tensor (no gradient)

// abs min and abs max of a tensor (NaN propagates, as torch's min/max do).
void abs_min_max(const at::Tensor& t, std::vector<double>& out) {
  if (!t.defined() || t.numel() == 0) {
    out.push_back(kNone);
    out.push_back(kNone);
    return;
  }
  const at::Tensor a = t.detach().abs();
  out.push_back(a.min().item<double>());
  out.push_back(a.max().item<double>());
}

bool finite(double min, double max) { return std::isfinite(min) && std::isfinite(max); }

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);
  return buf;
}

std::string row(double min, double max, const std::string& what) {
  return number(min) + " " + number(max) + " " + what + "\n";
}

}  // namespace

void UnderflowOverflowDetector::record(int64_t step, double loss, const torch::nn::Module& module) {
  Frame f;
  f.step = step;
  f.loss = loss;
  const auto params = module.named_parameters(true);
  if (names_.empty()) {
    for (const auto& p : params) names_.push_back(p.key());
  }
  f.weights.reserve(2 * names_.size());
  f.gradients.reserve(2 * names_.size());
  for (const auto& p : params) {
    abs_min_max(p.value(), f.weights);
    abs_min_max(p.value().grad(), f.gradients);
  }
  if (frames_.size() == kMaxFrames) frames_.pop_front();
  frames_.push_back(std::move(f));
}

void UnderflowOverflowDetector::check(const TrainingArguments& args, int64_t step, double loss,
                                      const torch::nn::Module& module) {
  if (enabled_ < 0)
    enabled_ =
        std::find(args.debug.begin(), args.debug.end(), "underflow_overflow") != args.debug.end() ? 1 : 0;
  if (enabled_ == 0) return;
  record(step, loss, module);
  const Frame& f = frames_.back();
  // The first culprit: the loss, then the module's parameters in order (a
  // non-finite weight before its gradient, which it causes).
  std::string culprit;
  if (!std::isfinite(f.loss)) culprit = "the loss (" + number(f.loss) + ")";
  for (size_t i = 0; culprit.empty() && i < names_.size(); ++i) {
    if (!finite(f.weights[2 * i], f.weights[2 * i + 1])) {
      culprit = "the parameter " + names_[i];
    } else if (!finite(f.gradients[2 * i], f.gradients[2 * i + 1])) {
      culprit = "the gradient of " + names_[i];
    }
  }
  if (culprit.empty()) return;
  std::fprintf(stderr, "\nDetected inf/nan at step %lld in %s\n%s\n", static_cast<long long>(step),
               culprit.c_str(), report().c_str());
  throw UnderflowOverflowError("--debug underflow_overflow: inf/nan detected at step " +
                               std::to_string(step) + " in " + culprit +
                               "; the abs min/max of the loss, the parameters and the "
                               "gradients of the last " +
                               std::to_string(frames_.size()) + " steps are printed above");
}

std::string UnderflowOverflowDetector::report() const {
  std::string out = "Last " + std::to_string(frames_.size()) +
                    " frames (one per optimizer step; activations are out of reach: LibTorch modules have no "
                    "forward hooks):\n abs min  abs max metadata\n";
  for (const Frame& f : frames_) {
    out += "                  step " + std::to_string(f.step) + "\n";
    out += row(std::fabs(f.loss), std::fabs(f.loss), "loss");
    for (size_t i = 0; i < names_.size(); ++i) {
      out += row(f.weights[2 * i], f.weights[2 * i + 1], names_[i]);
      if (f.gradients[2 * i] >= 0)
        out += row(f.gradients[2 * i], f.gradients[2 * i + 1], names_[i] + ".grad");
    }
  }
  return out;
}

}  // namespace trainhook
