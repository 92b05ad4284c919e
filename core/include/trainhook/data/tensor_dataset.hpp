// An in-memory dataset of named tensors whose first dimension is the sample:
// one is the model's input, one the labels, any others ride along (a .pt data
// file's extra tensors, e.g. an attention mask). Every data format loads into one.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace trainhook {

using NamedTensor = std::pair<std::string, torch::Tensor>;

// A batch: the input and labels tensors, plus the other tensors of the data
// set by name. A TorchScript model's forward takes them by name (HF's Trainer
// passes a batch dict as keyword arguments); built-in models use inputs/labels.
struct Batch {
  torch::Tensor inputs;
  torch::Tensor labels;
  std::string input_name = "input";
  std::string label_name = "labels";
  std::vector<NamedTensor> extra;
  // The tensor called `name` (input, labels or an extra one), or nullptr.
  const torch::Tensor* find(const std::string& name) const;
  // Every tensor name of the batch, input and labels first.
  std::vector<std::string> names() const;
};

class TensorDataset {
 public:
  // Throws std::invalid_argument when the first dimensions differ.
  TensorDataset(torch::Tensor inputs, torch::Tensor labels, std::string description = "");
  // Named tensors; `input_name` and `label_name` must be among them.
  TensorDataset(std::vector<NamedTensor> tensors, const std::string& input_name,
                const std::string& label_name, std::string description = "");
  int64_t size() const noexcept { return size_; }
  // Samples at `indices` (int64, 1-D), in that order.
  Batch get(const torch::Tensor& indices) const;
  // Samples start .. start + count - 1 (views, no copy).
  Batch slice(int64_t start, int64_t count) const;
  // A dataset of the samples at `indices` (e.g. a shuffled copy).
  TensorDataset select(const torch::Tensor& indices) const;
  const torch::Tensor& inputs() const noexcept { return inputs_; }
  const torch::Tensor& labels() const noexcept { return labels_; }
  const std::string& input_name() const noexcept { return input_name_; }
  const std::string& label_name() const noexcept { return label_name_; }
  const std::vector<NamedTensor>& extra() const noexcept { return extra_; }
  std::vector<std::string> names() const;
  const std::string& description() const noexcept { return description_; }
  // Two datasets: the first `count` samples and the rest (no shuffling).
  std::pair<TensorDataset, TensorDataset> split_at(int64_t count) const;

 private:
  template <class Fn>
  TensorDataset map(Fn fn) const;
  torch::Tensor inputs_;
  torch::Tensor labels_;
  std::string input_name_ = "input";
  std::string label_name_ = "labels";
  std::vector<NamedTensor> extra_;
  int64_t size_ = 0;
  std::string description_;
};

}  // namespace trainhook
