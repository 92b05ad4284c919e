// HF's Trainer.create_optimizer for the torch.optim optimizers LibTorch ships.
#include <trainhook/optim/optimizer_factory.hpp>

#include <trainhook/optim/fused_adamw.hpp>

#include <torch/optim/adagrad.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/version.h>

#include <spdlog/spdlog.h>

#include <cctype>
#include <cmath>
#include <set>
#include <stdexcept>
#include <vector>

namespace trainhook {
namespace {

// The options of one optimizer from optim_args, read key by key; every key
// must be read (unknown ones are an error naming the valid ones).
class OptimArgs {
 public:
  OptimArgs(OptimizerName optim, std::map<std::string, std::string> values, std::vector<std::string> keys)
      : optim_(optim), values_(std::move(values)), keys_(std::move(keys)) {
    for (const auto& [key, value] : values_) {
      bool known = false;
      for (const auto& k : keys_) known = known || k == key;
      if (!known) {
        std::string valid;
        for (const auto& k : keys_) valid += (valid.empty() ? "" : ", ") + k;
        fail(key,
             "is not an option of this optimizer (its options: " + (valid.empty() ? "none" : valid) + ")");
      }
    }
  }

  double number(const std::string& key, double fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    try {
      size_t used = 0;
      const double d = std::stod(it->second, &used);
      if (used == it->second.size() && std::isfinite(d)) return d;
    } catch (const std::exception&) {
    }
    fail(key, "expected a number, got '" + it->second + "'");
  }

  // Python's strtobool spellings, as HF reads boolean optim_args.
  bool boolean(const std::string& key, bool fallback) const {
    auto it = values_.find(key);
    if (it == values_.end()) return fallback;
    std::string t;
    for (char c : it->second) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (t == "true" || t == "t" || t == "yes" || t == "y" || t == "on" || t == "1") return true;
    if (t == "false" || t == "f" || t == "no" || t == "n" || t == "off" || t == "0") return false;
    fail(key, "expected True or False, got '" + it->second + "'");
  }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::invalid_argument("optim_args: '" + key + "' for optim " + enum_name(optim_) + " " + what);
  }

 private:
  OptimizerName optim_;
  std::map<std::string, std::string> values_;
  std::vector<std::string> keys_;
};

// HF's two groups: weight decay on weights, none on biases / norm weights.
template <class Options>
std::vector<torch::optim::OptimizerParamGroup> param_groups(torch::nn::Module& module, const Options& base,
                                                            double weight_decay) {
  std::vector<torch::Tensor> decay, no_decay;
  for (const auto& p : module.parameters()) {
    if (!p.requires_grad()) continue;
    (p.dim() >= 2 ? decay : no_decay).push_back(p);
  }
  std::vector<torch::optim::OptimizerParamGroup> groups;
  auto with_decay = [&](double wd) {
    auto o = std::make_unique<Options>(base);
    o->weight_decay(wd);
    return o;
  };
  if (!decay.empty()) groups.emplace_back(decay, with_decay(weight_decay));
  if (!no_decay.empty()) groups.emplace_back(no_decay, with_decay(0.0));
  return groups;
}

}  // namespace

std::map<std::string, std::string> parse_optim_args(const std::optional<std::string>& optim_args) {
  std::map<std::string, std::string> out;
  if (!optim_args) return out;
  std::string text;
  for (char c : *optim_args)
    if (c != ' ') text += c;  // HF: optim_args.replace(" ", "")
  if (text.empty()) return out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string piece =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t eq = piece.find('=');
    if (eq == std::string::npos || eq == 0 || piece.find('=', eq + 1) != std::string::npos) {
      throw std::invalid_argument(
          "optim_args: expected key=value pieces separated by commas (e.g. "
          "\"momentum=0.9,nesterov=True\"), got '" +
          piece + "' in '" + *optim_args + "'");
    }
    out[piece.substr(0, eq)] = piece.substr(eq + 1);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerOptions& options,
                                                        torch::nn::Module& module) {
  auto values = parse_optim_args(options.optim_args_);
  switch (options.optim_) {
    case OptimizerName::adamw_torch:
    case OptimizerName::adamw_torch_fused: {
      const OptimArgs o(options.optim_, values, {"amsgrad"});
      const auto base = torch::optim::AdamWOptions(options.learning_rate_)
                            .betas({options.adam_beta1_, options.adam_beta2_})
                            .eps(options.adam_epsilon_)
                            .amsgrad(o.boolean("amsgrad", false));
      auto defaults = base;
      defaults.weight_decay(options.weight_decay_);
      auto groups = param_groups(module, base, options.weight_decay_);
      if (options.optim_ == OptimizerName::adamw_torch) {
        return std::make_unique<torch::optim::AdamW>(std::move(groups), defaults);
      }
      // The parameters' device decides; they are placed before the optimizer is made.
      const auto params = module.parameters();
      const auto device = params.empty() ? c10::DeviceType::CPU : params.front().device().type();
      // Asked for (the default only where the kernel exists): the same update, slower.
      if (!fused_adamw_available(device)) {
        spdlog::warn(
            "optim adamw_torch_fused: LibTorch {} has no fused AdamW kernel for {} parameters (CPU needs "
            "2.4, CUDA 2.0); AdamW's own step computes the same update",
            TORCH_VERSION, c10::DeviceTypeName(device, /*lower_case=*/true));
      }
      return std::make_unique<FusedAdamW>(std::move(groups), defaults);
    }
    case OptimizerName::sgd: {
      const OptimArgs o(options.optim_, values, {"momentum", "dampening", "nesterov", "weight_decay"});
      const double momentum = o.number("momentum", 0.0);
      const double dampening = o.number("dampening", 0.0);
      const bool nesterov = o.boolean("nesterov", false);
      if (nesterov && (momentum <= 0 || dampening != 0))
        o.fail("nesterov", "needs momentum > 0 and dampening 0 (torch.optim.SGD's rule)");
      const double weight_decay = o.number("weight_decay", options.weight_decay_);
      const auto base = torch::optim::SGDOptions(options.learning_rate_)
                            .momentum(momentum)
                            .dampening(dampening)
                            .nesterov(nesterov);
      auto defaults = base;
      defaults.weight_decay(weight_decay);
      return std::make_unique<torch::optim::SGD>(param_groups(module, base, weight_decay), defaults);
    }
    case OptimizerName::adagrad: {
      const OptimArgs o(options.optim_, values, {"lr_decay", "initial_accumulator_value", "eps"});
      const auto base = torch::optim::AdagradOptions(options.learning_rate_)
                            .lr_decay(o.number("lr_decay", 0.0))
                            .initial_accumulator_value(o.number("initial_accumulator_value", 0.0))
                            .eps(o.number("eps", 1e-10));
      auto defaults = base;
      defaults.weight_decay(options.weight_decay_);
      return std::make_unique<torch::optim::Adagrad>(param_groups(module, base, options.weight_decay_),
                                                     defaults);
    }
    case OptimizerName::rmsprop: {
      const OptimArgs o(options.optim_, values, {"alpha", "eps", "momentum", "centered"});
      const auto base = torch::optim::RMSpropOptions(options.learning_rate_)
                            .alpha(o.number("alpha", 0.99))
                            .eps(o.number("eps", 1e-8))
                            .momentum(o.number("momentum", 0.0))
                            .centered(o.boolean("centered", false));
      auto defaults = base;
      defaults.weight_decay(options.weight_decay_);
      return std::make_unique<torch::optim::RMSprop>(param_groups(module, base, options.weight_decay_),
                                                     defaults);
    }
  }
  throw std::invalid_argument(std::string("optim: unsupported optimizer '") + enum_name(options.optim_) +
                              "'");
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace trainhook
