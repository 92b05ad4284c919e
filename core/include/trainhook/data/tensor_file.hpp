// A .pt data file: what Python's torch.save({"input": X, "labels": y}, path)
// writes (the zip format of PyTorch >= 1.6), read without Python.
#pragma once

#include <trainhook/data/tensor_dataset.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// The dict's tensors in the file's order. Throws std::runtime_error naming the
// file: missing, not a torch.save zip (legacy pickle, other format), saved by a
// newer PyTorch than this LibTorch reads (both versions named), not a dict of
// string keys to tensors, no tensors.
std::vector<NamedTensor> read_tensor_file(const std::filesystem::path& file);

// When `reader_error` (a LibTorch reader's message) says the file's format
// version is above what this LibTorch reads: "<file>: saved by a newer PyTorch
// ... version N, this LibTorch reads up to M" naming both; otherwise nothing.
std::optional<std::string> newer_pytorch_message(const std::filesystem::path& file,
                                                 const std::string& reader_error);

}  // namespace trainhook
