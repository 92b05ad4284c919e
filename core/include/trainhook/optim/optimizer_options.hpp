// What make_optimizer (optimizer_factory.hpp) builds an optimizer from, in the
// style of LibTorch's AdamOptions: HF's optimizer arguments as fields, each with
// a chained setter. The trainer fills it from the run's arguments
// (trainer/options_from_arguments.hpp); optim/ knows nothing of the rest of
// them. No LibTorch here.
#pragma once

#include <trainhook/args/strategies.hpp>
#include <trainhook/common/option_arg.hpp>

#include <optional>
#include <string>

namespace trainhook {

struct OptimizerOptions {
  // --optim: which optimizer (the trainer gives the run's, whose default
  // follows the LibTorch version: default_optimizer() of the arguments).
  TRAINHOOK_ARG(OptimizerName, optim) = OptimizerName::adamw_torch;
  TRAINHOOK_ARG(double, learning_rate) = 5e-5;
  // On every parameter but biases and normalisation weights, as HF.
  TRAINHOOK_ARG(double, weight_decay) = 0.0;
  TRAINHOOK_ARG(double, adam_beta1) = 0.9;
  TRAINHOOK_ARG(double, adam_beta2) = 0.999;
  TRAINHOOK_ARG(double, adam_epsilon) = 1e-8;
  // HF's "key=value,key=value" string (optimizer_factory.hpp lists the keys).
  TRAINHOOK_ARG(std::optional<std::string>, optim_args);
};

}  // namespace trainhook
