#include <trainhook/nan_guard/nan_guard_callback.hpp>

#include <trainhook/support/tensor_math.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace trainhook::nan_guard {

NanGuardCallback::NanGuardCallback(trainhook::Setup& setup)
    : NanGuardCallback(setup.host(), NanGuardOptions::from_json(setup.config_json())) {}

NanGuardCallback::NanGuardCallback(const trainhook::Host& host, const NanGuardOptions& options)
    : host_(host), options_(options) {
  if (!host_.has_model_access()) throw ConfigError("nan_guard needs a trainer with ABI 1.1 (tensor views)");
}

std::string NanGuardCallback::first_non_finite_gradient() const {
  for (const TensorView t : host_.tensors(Tensors::gradients))
    if (!support::all_finite(t)) return std::string(t.name());
  return "";
}

void NanGuardCallback::on_pre_optimizer_step(trainhook::Event& e) {
  const th_step_values* step = e.step();
  if (step == nullptr) throw std::runtime_error("nan_guard: the trainer gave no step values");
  // A finite norm means every gradient is finite; NaN also means "not computed"
  // (max_grad_norm <= 0), so then the views are read.
  const std::string param = std::isfinite(step->grad_norm) ? std::string() : first_non_finite_gradient();
  const bool loss_bad = !std::isfinite(step->loss);
  const bool bad = !param.empty() || (loss_bad && e.state().world_size <= 1);
  if (!bad) {
    consecutive_ = 0;
    return;
  }
  ++consecutive_;
  const int64_t at = e.state().global_step + 1;  // the step being made
  std::ostringstream what;
  what << "step " << at << ": ";
  if (!param.empty()) {
    what << "non-finite gradient in '" << param << "' (loss " << step->loss << ")";
  } else {
    what << "non-finite loss " << step->loss;
  }
  if (options_.action() == Action::skip) {
    host_.skip_optimizer_step();
    ++skipped_;
    host_.warn(what.str() + ": optimizer step skipped (" + std::to_string(skipped_) + " skipped so far)");
    host_.add_metric("nan_guard_skipped_steps", static_cast<double>(skipped_));
    return;
  }
  if (consecutive_ >= options_.patience()) {
    what << "; " << consecutive_ << " consecutive bad step(s), patience " << options_.patience()
         << ": stopping training";
    host_.error(what.str());
    host_.request_stop(what.str());
    e.control().should_training_stop = 1;
  } else {
    host_.warn(what.str() + " (" + std::to_string(consecutive_) + " of patience " +
               std::to_string(options_.patience()) + ")");
  }
}

}  // namespace trainhook::nan_guard
