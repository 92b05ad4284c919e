// A dataset of named tensors whose first dimension is the sample: one is the
// model's input, one the labels, any others ride along (a .pt data file's extra
// tensors, e.g. an attention mask). Every data format loads into one. The
// tensors may be in memory or views of memory-mapped files (data/mapped_file.hpp),
// in one part or in several shards (one per file); get() and slice() copy only
// the batch they return.
#pragma once

#include <trainhook/data/batch.hpp>

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace trainhook {

class TensorDataset;

// A step run on every batch right after get() or slice() gathered it, on the
// thread that builds the batch (a data worker too): widening stored ids,
// checking them, augmenting. It may only read the dataset. `indices` are the
// batch's sample indices in the dataset. It throws to reject the batch; the
// error should name the file and sample (TensorDataset::locate).
using BatchHook =
    std::function<void(Batch& batch, const torch::Tensor& indices, const TensorDataset& dataset)>;

// One shard's tensors, and the file it came from (for errors).
struct DatasetShard {
  std::vector<NamedTensor> tensors;
  std::string file;
};

class TensorDataset {
 public:
  // Throws std::invalid_argument when the first dimensions differ.
  TensorDataset(torch::Tensor inputs, torch::Tensor labels, std::string description = "");
  // Named tensors; `input_name` and `label_name` must be among them.
  TensorDataset(std::vector<NamedTensor> tensors, const std::string& input_name,
                const std::string& label_name, std::string description = "");
  // Several shards with the same tensor names, dtypes and per-sample shapes,
  // samples numbered across them in order. Throws std::invalid_argument naming
  // the shard file whose names, dtype or shape differ from the first shard's.
  TensorDataset(std::vector<DatasetShard> shards, const std::string& input_name,
                const std::string& label_name, std::string description = "");
  int64_t size() const noexcept { return size_; }
  int64_t shard_count() const noexcept { return static_cast<int64_t>(shards_.size()) + 1; }
  // "<file> sample <n>" (or "sample <n>" with no file): where sample `index` is.
  std::string locate(int64_t index) const;
  // The file of the shard that holds sample `index` ("" when none was named).
  const std::string& file_of(int64_t index) const;
  // Runs after every get()/slice(), in the order added.
  void add_batch_hook(BatchHook hook);
  // Epoch-less data (a token stream of overlapping windows): the trainer draws
  // each batch at random with replacement and needs max_steps, not epochs.
  bool epochless() const noexcept { return epochless_; }
  void set_epochless(bool value) noexcept { epochless_ = value; }
  // Every sample's value of the tensor `name` across all shards (e.g. the length
  // column of group_by_length), or an undefined tensor when there is none.
  torch::Tensor column(const std::string& name) const;
  // Samples at `indices` (int64, 1-D), in that order.
  Batch get(const torch::Tensor& indices) const;
  // Samples start .. start + count - 1 (views, no copy).
  Batch slice(int64_t start, int64_t count) const;
  // A dataset of the samples at `indices` (e.g. a shuffled copy; in memory).
  TensorDataset select(const torch::Tensor& indices) const;
  // The first shard's tensors (all of them when there is one shard).
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
  Batch gather(const torch::Tensor& indices) const;
  void run_hooks(Batch& batch, const torch::Tensor& indices) const;
  // Shards after the first (whose tensors are inputs_/labels_/extra_), with
  // the first sample index of each; the first shard's file is file_.
  struct Shard {
    torch::Tensor inputs;
    torch::Tensor labels;
    std::vector<NamedTensor> extra;
    std::string file;
    int64_t first = 0;
  };
  std::vector<Shard> shards_;
  std::string file_;
  int64_t first_size_ = 0;
  std::vector<BatchHook> hooks_;
  bool epochless_ = false;
  torch::Tensor inputs_;
  torch::Tensor labels_;
  std::string input_name_ = "input";
  std::string label_name_ = "labels";
  std::vector<NamedTensor> extra_;
  int64_t size_ = 0;
  std::string description_;
};

}  // namespace trainhook
