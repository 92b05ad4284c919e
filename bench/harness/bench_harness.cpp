#include "bench_harness.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <filesystem>

namespace trainhook::bench {

std::shared_ptr<MlpModel> make_mlp(int64_t hidden) {
  torch::manual_seed(1);
  return std::make_shared<MlpModel>(MlpOptions{kFeatures, kClasses, hidden, 2, 0.0});
}

std::shared_ptr<TensorDataset> make_data() {
  torch::manual_seed(0);
  // Two statements: the order of the draws must not depend on argument evaluation order.
  torch::Tensor features = torch::rand({kSamples, kFeatures});
  torch::Tensor labels = torch::randint(0, kClasses, {kSamples}, torch::kLong);
  return std::make_shared<TensorDataset>(features, labels);
}

TrainingArguments bench_args(int64_t max_steps, const std::string& output_dir) {
  TrainingArguments a;
  a.output_dir = output_dir;
  a.max_steps = max_steps;
  a.per_device_train_batch_size = kBatch;
  a.learning_rate = 1e-3;
  a.save_strategy = SaveStrategy::no;
  a.report_to = {"none"};
  return a;
}

std::string temp_output_dir(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace trainhook::bench
