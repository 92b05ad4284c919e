// Multi-layer perceptron for tabular classification: Linear+ReLU(+Dropout)
// num_layers times, then a Linear to the classes; cross-entropy loss.
#pragma once

#include <trainhook/models/model.hpp>

#include <torch/nn/modules/container/sequential.h>

namespace trainhook {

struct MlpOptions {
  int64_t in_features = 0;
  int64_t num_classes = 0;
  int64_t hidden_size = 128;
  int64_t num_layers = 2;
  double dropout = 0.0;
};

class MlpModel final : public torch::nn::Module, public Model {
 public:
  explicit MlpModel(const MlpOptions& options);
  torch::nn::Module& module() override { return *this; }
  torch::Tensor forward(const torch::Tensor& inputs) override;
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) override;
  std::string description() const override;

 private:
  MlpOptions options_;
  torch::nn::Sequential layers_{nullptr};
};

}  // namespace trainhook
