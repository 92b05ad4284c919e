// Small CNN for square one-channel images given as rows of side×side pixels:
// two 3×3 conv (padding 1) + ReLU blocks, a 2×2 max-pool, then an MLP head;
// cross-entropy loss.
#pragma once

#include <trainhook/models/model.hpp>

#include <torch/nn/modules/container/sequential.h>

namespace trainhook {

struct CnnOptions {
  int64_t image_size = 8;  // side of the square image
  int64_t num_classes = 0;
  int64_t channels = 32;  // of the second conv (the first has half)
  int64_t hidden_size = 128;
  double dropout = 0.0;
};

class CnnModel final : public torch::nn::Module, public Model {
 public:
  explicit CnnModel(const CnnOptions& options);
  torch::nn::Module& module() override { return *this; }
  // inputs: [batch, image_size*image_size] or [batch, 1, side, side].
  torch::Tensor forward(const torch::Tensor& inputs) override;
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) override;
  std::string description() const override;

 private:
  CnnOptions options_;
  torch::nn::Sequential features_{nullptr};
  torch::nn::Sequential head_{nullptr};
};

}  // namespace trainhook
