// The optimizer for a model from OptimizerOptions (optimizer_options.hpp),
// under HF's --optim names:
//   adamw_torch  torch.optim.AdamW (adam_beta1/2, adam_epsilon, weight_decay)
//   sgd          torch.optim.SGD
//   adagrad      torch.optim.Adagrad
//   rmsprop      torch.optim.RMSprop
// with learning_rate and, as HF, weight_decay on every parameter but biases and
// normalisation weights (parameters with fewer than two dimensions).
//
// optim_args is HF's "key=value,key=value" string (spaces ignored). HF 4.47.1
// passes it only to exotic optimizers; trainhook gives the torch.optim options
// of the four above through it (the HF docs' meaning of optim_args):
//   adamw_torch  amsgrad
//   sgd          momentum, dampening, nesterov, weight_decay (replaces --weight_decay)
//   adagrad      lr_decay, initial_accumulator_value, eps
//   rmsprop      alpha, eps, momentum, centered
#pragma once

#include <trainhook/optim/optimizer_options.hpp>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace trainhook {

// optim_args as key -> value text. Throws std::invalid_argument naming
// optim_args and the piece when one is not key=value.
std::map<std::string, std::string> parse_optim_args(const std::optional<std::string>& optim_args);

// Throws std::invalid_argument naming `optim`/`optim_args`, the key and the
// expected values: an unknown key for this optimizer, a value that is not a
// number / boolean, nesterov without momentum.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        torch::nn::Module& module);

// Sets the learning rate of every parameter group.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace trainhook
