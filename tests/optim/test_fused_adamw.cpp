// --optim adamw_torch_fused (optim/fused_adamw.hpp) against LibTorch's own
// AdamW, which trainer_hf_reference_optim holds to torch.optim.AdamW: the same
// steps, the same saved state, each way. On a LibTorch without the CPU kernel
// (1.13) the fused optimizer is AdamW's step, and these cases say so.
#include <doctest/doctest.h>
#include <trainhook/optim/fused_adamw.hpp>
#include <trainhook/optim/optimizer_factory.hpp>

#include <torch/torch.h>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A model with weights (decayed) and biases (not): HF's two parameter groups.
torch::nn::Sequential model_with_seed(int64_t seed) {
  torch::manual_seed(seed);
  torch::nn::Sequential m;
  m->push_back(torch::nn::Linear(6, 16));
  m->push_back(torch::nn::Functional(torch::relu));
  m->push_back(torch::nn::Linear(16, 3));
  return m;
}

trainhook::OptimizerOptions adamw_args(trainhook::OptimizerName optim, const char* optim_args = nullptr) {
  auto options = trainhook::OptimizerOptions().optim(optim).learning_rate(0.01).weight_decay(0.1);
  if (optim_args != nullptr) options.optim_args(optim_args);
  return options;
}

void train_steps(torch::nn::Sequential& m, torch::optim::Optimizer& opt, int steps, int64_t data_seed) {
  torch::manual_seed(data_seed);
  for (int i = 0; i < steps; ++i) {
    const auto x = torch::randn({8, 6});
    const auto y = torch::randint(0, 3, {8});
    opt.zero_grad();
    torch::nn::functional::cross_entropy(m->forward(x), y).backward();
    opt.step();
  }
}

double max_difference(torch::nn::Sequential& a, torch::nn::Sequential& b) {
  const auto pa = a->parameters(), pb = b->parameters();
  REQUIRE(pa.size() == pb.size());
  double worst = 0;
  for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, (pa[i] - pb[i]).abs().max().item<double>());
  return worst;
}

void say_which_kernel() {
  const std::string which = trainhook::fused_adamw_available(c10::DeviceType::CPU)
                                ? "LibTorch " TORCH_VERSION ": ATen's fused AdamW kernel on the CPU"
                                : "LibTorch " TORCH_VERSION
                                  " has no fused CPU kernel: adamw_torch_fused is AdamW's step here";
  MESSAGE(which);
}

}  // namespace

TEST_CASE("adamw_torch_fused: make_optimizer builds a FusedAdamW with HF's two groups") {
  auto m = model_with_seed(1);
  const auto opt = trainhook::make_optimizer(adamw_args(trainhook::OptimizerName::adamw_torch_fused), *m);
  REQUIRE(dynamic_cast<trainhook::FusedAdamW*>(opt.get()) != nullptr);
  REQUIRE(opt->param_groups().size() == 2);
  CHECK(opt->param_groups()[0].options().get_lr() == 0.01);
  CHECK(static_cast<torch::optim::AdamWOptions&>(opt->param_groups()[0].options()).weight_decay() == 0.1);
  CHECK(static_cast<torch::optim::AdamWOptions&>(opt->param_groups()[1].options()).weight_decay() == 0.0);
  const auto plain = trainhook::make_optimizer(adamw_args(trainhook::OptimizerName::adamw_torch), *m);
  CHECK(dynamic_cast<trainhook::FusedAdamW*>(plain.get()) == nullptr);
}

TEST_CASE("adamw_torch_fused: 20 steps equal adamw_torch's to 1e-6, with and without amsgrad") {
  say_which_kernel();
  for (const char* optim_args : {static_cast<const char*>(nullptr), "amsgrad=True"}) {
    CAPTURE(optim_args == nullptr ? "-" : optim_args);
    auto fused_model = model_with_seed(2), plain_model = model_with_seed(2);
    REQUIRE(max_difference(fused_model, plain_model) == 0.0);
    auto fused = trainhook::make_optimizer(
        adamw_args(trainhook::OptimizerName::adamw_torch_fused, optim_args), *fused_model);
    auto plain = trainhook::make_optimizer(adamw_args(trainhook::OptimizerName::adamw_torch, optim_args),
                                           *plain_model);
    train_steps(fused_model, *fused, 20, 3);
    train_steps(plain_model, *plain, 20, 3);
    auto before = model_with_seed(2);
    CHECK(max_difference(fused_model, before) > 1e-3);  // it trained
    CHECK(max_difference(fused_model, plain_model) < 1e-6);
    // The state is AdamW's, one per parameter, each counting its steps.
    CHECK(fused->state().size() == fused_model->parameters().size());
    for (const auto& [key, state] : fused->state())
      CHECK(static_cast<const torch::optim::AdamWParamState&>(*state).step() == 20);
  }
}

TEST_CASE("adamw_torch_fused: a saved state resumes with adamw_torch and the other way") {
  for (const bool fused_first : {true, false}) {
    CAPTURE(fused_first);
    const auto first =
        fused_first ? trainhook::OptimizerName::adamw_torch_fused : trainhook::OptimizerName::adamw_torch;
    const auto second =
        fused_first ? trainhook::OptimizerName::adamw_torch : trainhook::OptimizerName::adamw_torch_fused;
    // Reference: 10 steps in one optimizer.
    auto straight_model = model_with_seed(4);
    auto straight = trainhook::make_optimizer(adamw_args(first), *straight_model);
    train_steps(straight_model, *straight, 5, 5);
    train_steps(straight_model, *straight, 5, 6);
    // 5 steps, save, load into the other kind on a copy of the weights, 5 more.
    auto model = model_with_seed(4);
    auto opt = trainhook::make_optimizer(adamw_args(first), *model);
    train_steps(model, *opt, 5, 5);
    std::stringstream saved;
    {
      torch::serialize::OutputArchive archive;
      opt->save(archive);
      archive.save_to(saved);
    }
    auto resumed = trainhook::make_optimizer(adamw_args(second), *model);
    {
      torch::serialize::InputArchive archive;
      archive.load_from(saved);
      resumed->load(archive);
    }
    train_steps(model, *resumed, 5, 6);
    CHECK(max_difference(model, straight_model) < 1e-6);
  }
}
