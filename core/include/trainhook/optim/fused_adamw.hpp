// --optim adamw_torch_fused: torch.optim.AdamW(fused=True), HF's default
// optimizer on torch >= 2.8. The same algorithm as adamw_torch, computed by
// ATen's fused kernel (_fused_adamw_): one pass over each parameter instead of
// a dozen tensor operations, which is most of the optimizer's cost on small models.
//
// It is a torch::optim::AdamW that only replaces step(): its options, its
// param-group handling and its saved state (AdamWParamState) are AdamW's, so a
// checkpoint written with one of the two resumes with the other.
//
// The kernel runs on CPU tensors from LibTorch 2.4 on (CUDA from 2.0).
// Where it is missing, step() is AdamW's own and fused_adamw_available() says
// so; make_optimizer warns once.
#pragma once

#include <torch/optim/adamw.h>

namespace trainhook {

// Whether this LibTorch has the fused kernel for parameters on `device_type`.
bool fused_adamw_available(c10::DeviceType device_type);

class FusedAdamW final : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace trainhook
