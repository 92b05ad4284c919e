// A module's weights as model.safetensors: every parameter and buffer under
// its state-dict name ("layers.0.weight"), so Python's
// safetensors.torch.load_file + load_state_dict(strict=True) loads them into
// the same architecture.
#pragma once

#include <trainhook/data/tensor_dataset.hpp>

#include <torch/nn/module.h>

#include <filesystem>
#include <vector>

namespace trainhook {

inline constexpr const char* kSafetensorsFile = "model.safetensors";

// Throws std::runtime_error naming the file when it cannot be written.
void save_safetensors(const torch::nn::Module& module, const std::filesystem::path& file);
// The file's tensors in data order. Throws std::runtime_error naming the file
// (missing, truncated, malformed header, unknown dtype, overlapping offsets).
std::vector<NamedTensor> load_safetensors(const std::filesystem::path& file);

}  // namespace trainhook
