#include <trainhook/data/tensor_dataset.hpp>

#include <stdexcept>

namespace trainhook {

const torch::Tensor* Batch::find(const std::string& name) const {
  if (name == input_name) return &inputs;
  if (name == label_name) return &labels;
  for (const auto& [n, t] : extra) {
    if (n == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> Batch::names() const {
  std::vector<std::string> out{input_name, label_name};
  for (const auto& e : extra) out.push_back(e.first);
  return out;
}

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

TensorDataset::TensorDataset(std::vector<NamedTensor> tensors, const std::string& input_name,
                             const std::string& label_name, std::string description)
    : input_name_(input_name), label_name_(label_name), description_(std::move(description)) {
  const std::string where = description_.empty() ? std::string("TensorDataset") : description_;
  for (auto& [name, t] : tensors) {
    if (!t.defined() || t.dim() == 0) {
      throw std::invalid_argument(where + ": tensor '" + name + "' has no sample dimension (a 0-dim tensor)");
    }
    if (name == input_name) {
      inputs_ = t;
    } else if (name == label_name) {
      labels_ = t;
    } else {
      extra_.emplace_back(name, t);
    }
  }
  if (!inputs_.defined() || !labels_.defined()) {
    throw std::invalid_argument(where + ": no tensor named '" +
                                (inputs_.defined() ? label_name : input_name) + "'");
  }
  size_ = inputs_.size(0);
  for (const auto& [name, t] : tensors) {
    if (t.size(0) != size_) {
      throw std::invalid_argument(where + ": tensor '" + name + "' has " + std::to_string(t.size(0)) +
                                  " samples but '" + input_name + "' has " + std::to_string(size_) +
                                  " (every tensor's first dimension is the sample)");
    }
  }
}

std::vector<std::string> TensorDataset::names() const {
  std::vector<std::string> out{input_name_, label_name_};
  for (const auto& e : extra_) out.push_back(e.first);
  return out;
}

Batch TensorDataset::get(const torch::Tensor& indices) const {
  Batch b{inputs_.index_select(0, indices), labels_.index_select(0, indices), input_name_, label_name_, {}};
  b.extra.reserve(extra_.size());
  for (const auto& [n, t] : extra_) b.extra.emplace_back(n, t.index_select(0, indices));
  return b;
}

Batch TensorDataset::slice(int64_t start, int64_t count) const {
  Batch b{inputs_.narrow(0, start, count), labels_.narrow(0, start, count), input_name_, label_name_, {}};
  for (const auto& [n, t] : extra_) b.extra.emplace_back(n, t.narrow(0, start, count));
  return b;
}

template <class Fn>
TensorDataset TensorDataset::map(Fn fn) const {
  std::vector<NamedTensor> all{{input_name_, fn(inputs_)}, {label_name_, fn(labels_)}};
  for (const auto& [n, t] : extra_) all.emplace_back(n, fn(t));
  return TensorDataset(std::move(all), input_name_, label_name_, description_);
}

TensorDataset TensorDataset::select(const torch::Tensor& indices) const {
  return map([&](const torch::Tensor& t) { return t.index_select(0, indices); });
}

std::pair<TensorDataset, TensorDataset> TensorDataset::split_at(int64_t count) const {
  if (count < 0 || count > size_) {
    throw std::invalid_argument("TensorDataset::split_at: " + std::to_string(count) + " outside 0.." +
                                std::to_string(size_));
  }
  return {map([&](const torch::Tensor& t) { return t.narrow(0, 0, count); }),
          map([&](const torch::Tensor& t) { return t.narrow(0, count, size_ - count); })};
}

}  // namespace trainhook
