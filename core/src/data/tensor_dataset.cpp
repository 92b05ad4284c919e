#include <trainhook/data/tensor_dataset.hpp>

#include <stdexcept>

namespace trainhook {

namespace {

std::string shape_text(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t d = 1; d < t.dim(); ++d) out += (d > 1 ? ", " : "") + std::to_string(t.size(d));
  return out + "]";
}

// Same dtype and per-sample shape as the first shard's tensor of that name.
void check_like(const torch::Tensor& t, const torch::Tensor& first, const std::string& name,
                const std::string& file, const std::string& first_file) {
  if (t.scalar_type() != first.scalar_type()) {
    throw std::invalid_argument(file + ": tensor '" + name + "' is " +
                                std::string(c10::toString(t.scalar_type())) + " but the shard " + first_file +
                                " has " + std::string(c10::toString(first.scalar_type())) +
                                " (every shard needs the same dtype)");
  }
  if (t.dim() != first.dim() || t.sizes().slice(1) != first.sizes().slice(1)) {
    throw std::invalid_argument(file + ": tensor '" + name + "' has samples of shape " + shape_text(t) +
                                " but the shard " + first_file + " has " + shape_text(first));
  }
}

}  // namespace

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

TensorDataset::TensorDataset(std::vector<DatasetShard> shards, const std::string& input_name,
                             const std::string& label_name, std::string description) {
  if (shards.empty()) throw std::invalid_argument(description + ": no shard");
  const std::string first_file = shards.front().file;
  *this = TensorDataset(std::move(shards.front().tensors), input_name, label_name, std::move(description));
  file_ = first_file;
  first_size_ = size_;
  for (size_t s = 1; s < shards.size(); ++s) {
    const std::string& file = shards[s].file;
    TensorDataset part(std::move(shards[s].tensors), input_name, label_name, file);
    const auto first_names = names();
    if (part.names() != first_names) {
      std::string have, want;
      for (const auto& n : part.names()) have += (have.empty() ? "" : ", ") + n;
      for (const auto& n : first_names) want += (want.empty() ? "" : ", ") + n;
      throw std::invalid_argument(file + ": the shard has tensors " + have + " but " + first_file + " has " +
                                  want);
    }
    check_like(part.inputs_, inputs_, input_name, file, first_file);
    check_like(part.labels_, labels_, label_name, file, first_file);
    for (size_t e = 0; e < extra_.size(); ++e)
      check_like(part.extra_[e].second, extra_[e].second, extra_[e].first, file, first_file);
    shards_.push_back(Shard{part.inputs_, part.labels_, part.extra_, file, size_});
    size_ += part.size_;
  }
}

std::string TensorDataset::locate(int64_t index) const {
  int64_t local = index;
  const std::string* file = &file_;
  for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) {
    if (index >= it->first) {
      local = index - it->first;
      file = &it->file;
      break;
    }
  }
  return (file->empty() ? std::string() : *file + " ") + "sample " + std::to_string(local);
}

const std::string& TensorDataset::file_of(int64_t index) const {
  for (auto it = shards_.rbegin(); it != shards_.rend(); ++it) {
    if (index >= it->first) return it->file;
  }
  return file_;
}

void TensorDataset::add_batch_hook(BatchHook hook) { hooks_.push_back(std::move(hook)); }

void TensorDataset::run_hooks(Batch& batch, const torch::Tensor& indices) const {
  for (const auto& hook : hooks_) hook(batch, indices, *this);
}

torch::Tensor TensorDataset::column(const std::string& name) const {
  const auto pick = [&](const torch::Tensor& in, const torch::Tensor& lab,
                        const std::vector<NamedTensor>& extra) -> torch::Tensor {
    if (name == input_name_) return in;
    if (name == label_name_) return lab;
    for (const auto& [n, t] : extra) {
      if (n == name) return t;
    }
    return {};
  };
  const torch::Tensor first = pick(inputs_, labels_, extra_);
  if (!first.defined() || shards_.empty()) return first;
  std::vector<torch::Tensor> parts{first};
  for (const auto& s : shards_) parts.push_back(pick(s.inputs, s.labels, s.extra));
  return torch::cat(parts);
}

std::vector<std::string> TensorDataset::names() const {
  std::vector<std::string> out{input_name_, label_name_};
  for (const auto& e : extra_) out.push_back(e.first);
  return out;
}

// One shard: index_select copies the batch's rows and nothing else (from a
// memory mapping too). Several: each shard's rows are gathered and copied
// into their places in the batch.
Batch TensorDataset::gather(const torch::Tensor& indices) const {
  if (shards_.empty()) {
    Batch b{inputs_.index_select(0, indices), labels_.index_select(0, indices), input_name_, label_name_, {}};
    b.extra.reserve(extra_.size());
    for (const auto& [n, t] : extra_) b.extra.emplace_back(n, t.index_select(0, indices));
    return b;
  }
  const auto idx = indices.to(torch::kLong).contiguous();
  const auto count = idx.numel();
  const auto empty_like_rows = [&](const torch::Tensor& t) {
    std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    shape[0] = count;
    return torch::empty(shape, t.options());
  };
  Batch b{empty_like_rows(inputs_), empty_like_rows(labels_), input_name_, label_name_, {}};
  for (const auto& [n, t] : extra_) b.extra.emplace_back(n, empty_like_rows(t));
  const auto fill = [&](const torch::Tensor& mask, int64_t first, const torch::Tensor& in,
                        const torch::Tensor& lab, const std::vector<NamedTensor>& extra) {
    const auto where = mask.nonzero().reshape({-1});
    if (where.numel() == 0) return;
    const auto local = idx.index_select(0, where) - first;
    b.inputs.index_copy_(0, where, in.index_select(0, local));
    b.labels.index_copy_(0, where, lab.index_select(0, local));
    for (size_t e = 0; e < extra.size(); ++e)
      b.extra[e].second.index_copy_(0, where, extra[e].second.index_select(0, local));
  };
  if (count > 0 && (idx.min().item<int64_t>() < 0 || idx.max().item<int64_t>() >= size_)) {
    throw std::out_of_range(description_ + ": sample index out of range 0.." + std::to_string(size_ - 1));
  }
  fill(idx < first_size_, 0, inputs_, labels_, extra_);
  for (size_t s = 0; s < shards_.size(); ++s) {
    const int64_t end = s + 1 < shards_.size() ? shards_[s + 1].first : size_;
    fill((idx >= shards_[s].first).logical_and(idx < end), shards_[s].first, shards_[s].inputs,
         shards_[s].labels, shards_[s].extra);
  }
  return b;
}

Batch TensorDataset::get(const torch::Tensor& indices) const {
  Batch b = gather(indices);
  run_hooks(b, indices);
  return b;
}

Batch TensorDataset::slice(int64_t start, int64_t count) const {
  if (!shards_.empty() || !hooks_.empty()) return get(torch::arange(start, start + count, torch::kLong));
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
  if (!shards_.empty() || !hooks_.empty() || epochless_) {
    throw std::invalid_argument(description_ +
                                ": memory-mapped or sharded data cannot be reordered in memory "
                                "(give a validation file instead of a validation split)");
  }
  return map([&](const torch::Tensor& t) { return t.index_select(0, indices); });
}

std::pair<TensorDataset, TensorDataset> TensorDataset::split_at(int64_t count) const {
  if (!shards_.empty() || !hooks_.empty() || epochless_) {
    throw std::invalid_argument(description_ + ": memory-mapped or sharded data cannot be split in memory");
  }
  if (count < 0 || count > size_) {
    throw std::invalid_argument("TensorDataset::split_at: " + std::to_string(count) + " outside 0.." +
                                std::to_string(size_));
  }
  return {map([&](const torch::Tensor& t) { return t.narrow(0, 0, count); }),
          map([&](const torch::Tensor& t) { return t.narrow(0, count, size_ - count); })};
}

}  // namespace trainhook
