// optimizer.pt as torch.optim writes it (Optimizer.state_dict() through
// torch.save), for the optimizers both sides have: AdamW (and
// adamw_torch_fused), SGD, Adagrad, RMSprop.
//   {"state": {<index>: {"step": tensor(float), "exp_avg": ..., ...}},
//    "param_groups": [{"lr": ..., <the optimizer's options>, "initial_lr": ...,
//                      "params": [<index>, ...]}, ...]}
// A parameter's index counts through the groups in order, so our groups
// (weight-decayed parameters, then biases and 1-D weights; optimizer_factory)
// must match HF's (get_decay_parameter_names) for the same model: the reader
// checks every state tensor's shape against its parameter.
#pragma once

#include <torch/optim/optimizer.h>

#include <filesystem>

namespace trainhook {

// Whether the optimizer is one of the four with torch.optim's layout.
bool has_hf_optimizer_layout(const torch::optim::Optimizer& optimizer);

// `initial_lr` is LambdaLR's base rate (learning_rate); every group's "lr" is
// `next_lr`, the rate of the next step, which HF's optimizer holds after the
// scheduler's step (ours sets it just before each step). Throws
// std::runtime_error naming the optimizer when it is not one of the four.
void save_hf_optimizer(const torch::optim::Optimizer& optimizer, double initial_lr, double next_lr,
                       const std::filesystem::path& file);

// Replaces the optimizer's state and its groups' options with the file's (as
// torch's load_state_dict). Throws std::runtime_error naming the file and what
// does not fit: another optimizer's keys, other group sizes, a state tensor of
// another shape than its parameter, a refused pickle.
void load_hf_optimizer(torch::optim::Optimizer& optimizer, const std::filesystem::path& file);

}  // namespace trainhook
