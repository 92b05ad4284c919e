// The CLI's data: the train/validation/test files of DataArguments loaded into
// TensorDatasets. Torch-free header (the CLI includes it without LibTorch's
// headers); the datasets are complete types in data/tensor_dataset.hpp.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

class TensorDataset;

// tabular: .csv rows; text: .txt characters; tensors: a .pt file of named tensors;
// tokens: .bin token-id files (windows of block_size + 1); arrays: folders of .npy files.
enum class DataKind { tabular, text, tensors, tokens, arrays };

// What a model needs to know about the data to be built for it.
struct DataInfo {
  DataKind kind = DataKind::tabular;
  int64_t num_features = 0;  // tabular: features per row
  int64_t num_classes = 0;   // tabular/tensors: labels are 0..num_classes-1 (0: real-valued labels)
  bool real_labels = false;  // labels are floating point (regression)
  int64_t vocab_size = 0;    // text: distinct characters; tokens: largest id + 1, or --vocab_size
  int64_t block_size = 0;    // text/tokens: context length
  std::string vocabulary;    // text: the characters, index = token id
};

struct LoadedData {
  std::shared_ptr<TensorDataset> train;       // null when no train_file
  std::shared_ptr<TensorDataset> validation;  // validation_file, or split from train
  std::shared_ptr<TensorDataset> test;        // test_file
  DataInfo info;
  // Sample counts (0 when absent), for callers without LibTorch.
  int64_t train_samples = 0;
  int64_t validation_samples = 0;
  int64_t test_samples = 0;
};

// Loads every file named in `data` (.csv: labelled rows; .txt: characters;
// .pt/.pth: torch.save({"input": X, "labels": y}) dicts of equally long
// tensors). `seed` shuffles rows before a validation split; `real_labels`
// reads CSV labels as real numbers (a regression loss). Throws
// std::runtime_error naming the file (and line) for a missing file, a ragged
// CSV, a non-number, a label out of range, a text shorter than one block, or a
// .pt file that is no dict of tensors or has no input/labels tensor.
// Token files (.bin): `vocab_size` is the model's vocabulary (unset: the largest
// id of the training files + 1, found by one streamed pass); every batch's ids
// are checked against it. Arrays (.npy folders) and token files are memory-mapped.
LoadedData load_data(const DataArguments& data, uint64_t seed, bool real_labels = false,
                     std::optional<int64_t> vocab_size = std::nullopt);

}  // namespace trainhook
