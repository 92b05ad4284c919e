#include <trainhook/data/tensor_dataset.hpp>

#include <stdexcept>

namespace trainhook {

TensorDataset::TensorDataset(torch::Tensor inputs, torch::Tensor labels, std::string description)
    : inputs_(std::move(inputs)), labels_(std::move(labels)), description_(std::move(description)) {
  if (!inputs_.defined() || !labels_.defined() || inputs_.dim() == 0 || labels_.dim() == 0) {
    throw std::invalid_argument("TensorDataset: inputs and labels must be tensors with a sample dimension");
  }
  if (inputs_.size(0) != labels_.size(0)) {
    throw std::invalid_argument("TensorDataset: " + std::to_string(inputs_.size(0)) + " inputs but " +
                                std::to_string(labels_.size(0)) + " labels");
  }
  size_ = inputs_.size(0);
}

Batch TensorDataset::get(const torch::Tensor& indices) const {
  return {inputs_.index_select(0, indices), labels_.index_select(0, indices)};
}

std::pair<TensorDataset, TensorDataset> TensorDataset::split_at(int64_t count) const {
  if (count < 0 || count > size_) {
    throw std::invalid_argument("TensorDataset::split_at: " + std::to_string(count) + " outside 0.." +
                                std::to_string(size_));
  }
  return {TensorDataset(inputs_.narrow(0, 0, count), labels_.narrow(0, 0, count), description_),
          TensorDataset(inputs_.narrow(0, count, size_ - count), labels_.narrow(0, count, size_ - count),
                        description_)};
}

}  // namespace trainhook
