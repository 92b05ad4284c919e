// Gradient clipping for --max_grad_norm: torch.nn.utils.clip_grad_norm_ with
// the L2 norm, one difference in cost and none in result. Torch multiplies every
// gradient by min(1, max_norm / (norm + 1e-6)) on every step; when that factor
// is 1 the product is the gradient itself, so here the multiplications are
// skipped (on most steps of a healthy run: a tenth of a small model's step).
// A non-finite norm scales as torch does (the gradients become NaN), so the
// skip never hides an overflow.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace trainhook {

// Returns the total L2 norm of the gradients before clipping (torch's return
// value); parameters without a gradient are left out, 0 when none has one.
double clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace trainhook
