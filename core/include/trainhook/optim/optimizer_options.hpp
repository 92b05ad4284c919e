// What make_optimizer (optimizer_factory.hpp) builds an optimizer from, in the
// style of LibTorch's AdamOptions: HF's optimizer arguments as fields, each with
// a chained setter. The trainer fills it from the run's arguments
// (trainer/options_from_arguments.hpp); optim/ knows nothing of the rest of
// them. No LibTorch here.
#pragma once

#include <trainhook/args/strategies.hpp>

#include <optional>
#include <string>
#include <utility>

namespace trainhook {

struct OptimizerOptions {
  // --optim: which optimizer (the trainer gives the run's, whose default
  // follows the LibTorch version: default_optimizer() of the arguments).
  OptimizerOptions& optim(OptimizerName value) {
    optim_ = value;
    return *this;
  }
  OptimizerOptions& learning_rate(double value) {
    learning_rate_ = value;
    return *this;
  }
  // On every parameter but biases and normalisation weights, as HF.
  OptimizerOptions& weight_decay(double value) {
    weight_decay_ = value;
    return *this;
  }
  OptimizerOptions& adam_beta1(double value) {
    adam_beta1_ = value;
    return *this;
  }
  OptimizerOptions& adam_beta2(double value) {
    adam_beta2_ = value;
    return *this;
  }
  OptimizerOptions& adam_epsilon(double value) {
    adam_epsilon_ = value;
    return *this;
  }
  // HF's "key=value,key=value" string (optimizer_factory.hpp lists the keys).
  OptimizerOptions& optim_args(std::optional<std::string> value) {
    optim_args_ = std::move(value);
    return *this;
  }

  OptimizerName optim_ = OptimizerName::adamw_torch;
  double learning_rate_ = 5e-5;
  double weight_decay_ = 0.0;
  double adam_beta1_ = 0.9;
  double adam_beta2_ = 0.999;
  double adam_epsilon_ = 1e-8;
  std::optional<std::string> optim_args_;
};

}  // namespace trainhook
