// A LibTorch archive (torch::serialize::OutputArchive: model.pt, rng_state.pt)
// written as every checkpoint file is: to a temporary beside the file, then
// renamed into place (atomic_file.hpp).
#pragma once

#include <torch/serialize/output-archive.h>

#include <filesystem>

namespace trainhook {

// A full disk is a std::runtime_error naming the file and the free space,
// never LibTorch's terminate.
void save_archive_atomically(torch::serialize::OutputArchive& archive, const std::filesystem::path& file);

}  // namespace trainhook
