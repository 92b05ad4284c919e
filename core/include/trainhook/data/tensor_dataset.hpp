// An in-memory dataset: one inputs tensor and one labels tensor whose first
// dimension is the sample. Every built-in data format loads into one.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>

namespace trainhook {

struct Batch {
  torch::Tensor inputs;
  torch::Tensor labels;
};

class TensorDataset {
 public:
  // Throws std::invalid_argument when the first dimensions differ.
  TensorDataset(torch::Tensor inputs, torch::Tensor labels, std::string description = "");
  int64_t size() const noexcept { return size_; }
  // Samples at `indices` (int64, 1-D), in that order.
  Batch get(const torch::Tensor& indices) const;
  const torch::Tensor& inputs() const noexcept { return inputs_; }
  const torch::Tensor& labels() const noexcept { return labels_; }
  const std::string& description() const noexcept { return description_; }
  // Two datasets: the first `count` samples and the rest (no shuffling).
  std::pair<TensorDataset, TensorDataset> split_at(int64_t count) const;

 private:
  torch::Tensor inputs_;
  torch::Tensor labels_;
  int64_t size_ = 0;
  std::string description_;
};

}  // namespace trainhook
