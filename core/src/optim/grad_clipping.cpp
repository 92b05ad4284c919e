// clip_grad_norm: the arithmetic of torch.nn.utils.clip_grad_norm_ (norm 2).
#include <trainhook/optim/grad_clipping.hpp>

#include <ATen/ATen.h>

#include <cmath>

namespace trainhook {

double clip_grad_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<at::Tensor> grads;
  grads.reserve(parameters.size());
  for (const auto& p : parameters)
    if (p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  std::vector<at::Tensor> norms;
  norms.reserve(grads.size());
  for (const auto& g : grads) norms.push_back(g.norm(2));
  const at::Tensor total = norms.size() == 1 ? norms[0] : at::stack(norms).norm(2);
  // One read of the norm (the C++ API returns it as a double anyway).
  const double norm = total.item<double>();
  // The factor as torch computes it, in the norm's float32 arithmetic, so the
  // skip happens exactly when torch's clamped factor is 1.
  const float factor_value = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  if (total.scalar_type() == at::kFloat && std::isfinite(norm) && factor_value >= 1.0f) return norm;
  const at::Tensor factor = at::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (auto& g : grads) g.mul_(factor);
  return norm;
}

}  // namespace trainhook
