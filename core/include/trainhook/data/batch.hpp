// A batch of samples as the data sets (tensor_dataset.hpp) build it and the
// models (models/model.hpp) take it: the input and labels tensors plus the
// data set's other tensors by name. Its own header so that a model needs no
// data set.
#pragma once

#include <torch/types.h>

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

}  // namespace trainhook
