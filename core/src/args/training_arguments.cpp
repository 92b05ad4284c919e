// The default optimizer and the *_steps resolution the trainer applies once it
// knows max_steps.
#include <trainhook/args/training_arguments.hpp>

#include <cmath>

namespace trainhook {

// TRAINHOOK_DEFAULT_OPTIM_FUSED: set by core/CMakeLists.txt for LibTorch >= 2.8.
OptimizerName default_optimizer() {
#ifdef TRAINHOOK_DEFAULT_OPTIM_FUSED
  return OptimizerName::adamw_torch_fused;
#else
  return OptimizerName::adamw_torch;
#endif
}

int64_t resolve_steps(double value, int64_t max_steps) {
  if (!(value > 0)) return 0;
  if (value < 1) {
    // The tiny slack keeps products such as 100 * 0.07 (= 7.000000000000001)
    // from rounding up to the next step.
    const double steps = std::ceil(static_cast<double>(max_steps) * value - 1e-9);
    return steps < 1 ? 1 : static_cast<int64_t>(steps);
  }
  return static_cast<int64_t>(value);
}

}  // namespace trainhook
