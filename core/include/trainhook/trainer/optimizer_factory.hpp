// The optimizer for a model from TrainingArguments::optim: "adamw_torch"
// (AdamW with adam_beta1/2, adam_epsilon, weight_decay, HF defaults) or "sgd".
// As HF, weight decay is not applied to biases and normalisation weights
// (parameters with fewer than two dimensions).
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <memory>

namespace trainhook {

// Throws std::invalid_argument naming `optim` and the valid names.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainingArguments& args,
                                                        torch::nn::Module& module);

// Sets the learning rate of every parameter group.
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace trainhook
