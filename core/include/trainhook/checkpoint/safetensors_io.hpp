// A module's weights as model.safetensors: every parameter and buffer under
// its state-dict name ("layers.0.weight"), so Python's
// safetensors.torch.load_file + load_state_dict(strict=True) loads them into
// the same architecture.
#pragma once

#include <torch/nn/module.h>

#include <filesystem>

namespace trainhook {

inline constexpr const char* kSafetensorsFile = "model.safetensors";

// Throws std::runtime_error naming the file when it cannot be written.
void save_safetensors(const torch::nn::Module& module, const std::filesystem::path& file);

// Copies every parameter and buffer from the file by state-dict name (an HF
// checkpoint's weights). Throws std::runtime_error naming the file and the
// tensor: missing, another shape or dtype, or a tensor the model lacks.
void load_safetensors(torch::nn::Module& module, const std::filesystem::path& file);

}  // namespace trainhook
