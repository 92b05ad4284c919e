// A .pt data file: what Python's torch.save({"input": X, "labels": y}, path)
// writes (the zip format of PyTorch >= 1.6), read without Python.
#pragma once

#include <trainhook/data/tensor_dataset.hpp>

#include <filesystem>
#include <vector>

namespace trainhook {

// The dict's tensors in the file's order. Throws std::runtime_error naming the
// file: missing, not a torch.save zip (legacy pickle, other format), saved by a
// newer PyTorch than this LibTorch reads (both versions named), not a dict of
// string keys to tensors, no tensors.
std::vector<NamedTensor> read_tensor_file(const std::filesystem::path& file);

}  // namespace trainhook
