// FusedAdamW: AdamW's state, ATen's fused update.
#include <trainhook/optim/fused_adamw.hpp>

#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <vector>

namespace trainhook {
namespace {

constexpr bool kFusedOnCpu = TORCH_VERSION_MAJOR > 2 ||
                             (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4);
constexpr bool kFusedOnCuda = TORCH_VERSION_MAJOR >= 2;

}  // namespace

bool fused_adamw_available(c10::DeviceType device_type) {
  if (device_type == c10::DeviceType::CPU) return kFusedOnCpu;
  if (device_type == c10::DeviceType::CUDA) return kFusedOnCuda;
  return false;
}

torch::Tensor FusedAdamW::step(LossClosure closure) {
#if TORCH_VERSION_MAJOR >= 2
  // A parameter on a device without the kernel (CPU before LibTorch 2.4):
  // AdamW's own step, as make_optimizer warned.
  for (const auto& group : param_groups_)
    for (const auto& p : group.params())
      if (p.grad().defined() && !fused_adamw_available(p.device().type()))
        return torch::optim::AdamW::step(std::move(closure));
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    // One kernel call per group; sparse gradients are an error, as in torch.optim.
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      TORCH_CHECK(!p.grad().is_sparse(), "adamw_torch_fused does not support sparse gradients");
      auto& slot = state_[p.unsafeGetTensorImpl()];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        if (options.amsgrad()) fresh->max_exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
      state.step(state.step() + 1);
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      if (options.amsgrad()) max_exp_avg_sqs.push_back(state.max_exp_avg_sq());
      // The kernel reads the step count (already advanced, as torch.optim's
      // _fused_adamw does before calling it) from a float tensor.
      steps.push_back(at::scalar_tensor(static_cast<double>(state.step()),
                                        at::TensorOptions().dtype(at::kFloat).device(p.device())));
    }
    if (params.empty()) continue;
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, options.lr(),
                      std::get<0>(options.betas()), std::get<1>(options.betas()), options.weight_decay(),
                      options.eps(), options.amsgrad(), /*maximize=*/false);
  }
  return loss;
#else
  return torch::optim::AdamW::step(std::move(closure));
#endif
}

}  // namespace trainhook
