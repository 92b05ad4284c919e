#include <trainhook/trainer/optimizer_factory.hpp>

#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <stdexcept>

namespace trainhook {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainingArguments& args,
                                                        torch::nn::Module& module) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  if (args.optim == OptimizerName::adamw_torch) {
    auto options = [&](double wd) {
      return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(args.learning_rate)
                                                              .betas({args.adam_beta1, args.adam_beta2})
                                                              .eps(args.adam_epsilon)
                                                              .weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    if (!decay.empty()) groups.emplace_back(decay, options(args.weight_decay));
    if (!no_decay.empty()) groups.emplace_back(no_decay, options(0.0));
    return std::make_unique<torch::optim::AdamW>(groups, *options(args.weight_decay));
  }
  if (args.optim == OptimizerName::sgd) {
    auto options = [&](double wd) {
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(args.learning_rate).weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    if (!decay.empty()) groups.emplace_back(decay, options(args.weight_decay));
    if (!no_decay.empty()) groups.emplace_back(no_decay, options(0.0));
    return std::make_unique<torch::optim::SGD>(groups, *options(args.weight_decay));
  }
  throw std::invalid_argument(std::string("optim: unsupported optimizer '") + enum_name(args.optim) + "'");
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace trainhook
