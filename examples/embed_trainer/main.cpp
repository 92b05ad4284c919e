// Embedding the Trainer in your own program: a user-defined LibTorch module,
// an in-memory dataset, compute_metrics and a C++ callback that watches the
// run. Trains a small network to classify points of two concentric rings.
//
// usage: embed_trainer <output_dir>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/trainer/eval_prediction.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace {

// The user's own module: any torch::nn::Module works.
struct RingNetImpl : torch::nn::Module {
  RingNetImpl()
      : fc1(register_module("fc1", torch::nn::Linear(2, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, 64))),
        out(register_module("out", torch::nn::Linear(64, 2))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return out->forward(torch::tanh(fc2->forward(torch::tanh(fc1->forward(x)))));
  }
  torch::nn::Linear fc1, fc2, out;
};
TORCH_MODULE(RingNet);

// Two noisy concentric rings (radius 0.3 and 0.8), `n` points each.
std::shared_ptr<trainhook::TensorDataset> rings(int64_t n, uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  auto ring = [&](double radius) {
    auto angle = torch::rand({n}, gen) * 2 * M_PI;
    auto r = radius + torch::randn({n}, gen) * 0.05;
    return torch::stack({r * torch::cos(angle), r * torch::sin(angle)}, 1);
  };
  auto labels = torch::cat({torch::zeros({n}, torch::kLong), torch::ones({n}, torch::kLong)});
  return std::make_shared<trainhook::TensorDataset>(torch::cat({ring(0.3), ring(0.8)}).to(torch::kFloat),
                                                    labels);
}

// A user callback: reports each evaluation and remembers the best accuracy.
// The same trainhook::Callback class a plugin author derives from; only the
// events it overrides reach it.
class Watcher final : public trainhook::Callback {
 public:
  explicit Watcher(double* best) : best_(best) {}
  void on_train_end(trainhook::Event& e) override {
    std::printf("watcher: training ended at step %lld\n", static_cast<long long>(e.state().global_step));
  }
  void on_evaluate(trainhook::Event& e) override {
    if (const auto acc = e.values().find("eval_accuracy")) {
      *best_ = std::max(*best_, *acc);
      std::printf("watcher: step %lld eval_accuracy %.3f\n", static_cast<long long>(e.state().global_step),
                  *acc);
    }
  }

 private:
  double* best_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <output_dir>\n", argv[0]);
    return 2;
  }
  try {
    torch::manual_seed(0);
    auto model = trainhook::make_model(
        RingNet(),
        [](const torch::Tensor& logits, const torch::Tensor& labels) {
          return torch::nn::functional::cross_entropy(logits, labels);
        },
        "two-rings MLP");

    trainhook::TrainingArguments args;
    args.output_dir = argv[1];
    args.num_train_epochs = 40;
    args.per_device_train_batch_size = 32;
    args.learning_rate = 1e-2;
    args.eval_strategy = trainhook::IntervalStrategy::epoch;
    args.logging_strategy = trainhook::IntervalStrategy::epoch;
    args.save_strategy = trainhook::SaveStrategy::no;
    args.disable_tqdm = true;

    double best = 0;
    trainhook::TrainerOptions options;
    options.use_plugins = false;  // a self-contained program: only its own callback
    options.compute_metrics = trainhook::accuracy_metrics;
    options.callbacks.push_back(trainhook::make_callback<Watcher>("watcher", &best));

    trainhook::Trainer trainer(model, args, rings(400, 1), rings(100, 2), std::move(options));
    const auto result = trainer.train();
    trainer.log_metrics("train", result.metrics);
    const auto prediction = trainer.predict(rings(100, 3));
    trainer.log_metrics("test", prediction.metrics);
    const double test_accuracy = prediction.metrics.at("test_accuracy");
    std::printf("best eval accuracy %.3f, test accuracy %.3f\n", best, test_accuracy);
    if (test_accuracy < 0.9) {
      std::fprintf(stderr, "embed_trainer: test accuracy %.3f is below 0.9\n", test_accuracy);
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed_trainer: error: %s\n", e.what());
    return 1;
  }
}
