// Files that Python's torch.load(path, weights_only=True) reads, written from
// C++, and the tensors of files torch.save wrote, read back. Writing uses
// LibTorch's Pickler with type tags off: dicts, generic lists (never LibTorch's
// specialised int/double lists, which pickle as torch.jit._pickle globals),
// tuples, numbers, strings, None and tensors, in the zip layout of torch.save
// ("archive/data.pkl" + "archive/data/<key>").
#pragma once

#include <trainhook/checkpoint/torch_save_file.hpp>

#include <ATen/core/ivalue.h>
#include <torch/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::pickle_values {

// Builders of the IValues the writer accepts.
c10::impl::GenericDict dict_of_strings();  // str -> any
c10::impl::GenericDict dict_of_ints();     // int -> any
c10::impl::GenericList list();             // any
c10::IValue tuple(std::vector<c10::IValue> items);

}  // namespace trainhook::pickle_values

namespace trainhook {

// Writes `value` atomically (atomic_file.hpp); throws std::runtime_error naming
// the file. Tensors are copied to contiguous CPU storage.
void save_torch_pickle(const c10::IValue& value, const std::filesystem::path& file);

// A Tensor node of `file` as a tensor of its own (copied out of the file).
// Throws std::runtime_error naming the file for a dtype LibTorch lacks.
torch::Tensor load_pickle_tensor(const TorchSaveFile& file, const PickleTensor& tensor);

// Whether the zip holds a TorchScript archive's constants.pkl: LibTorch's
// torch::serialize archives (our optimizer.pt and rng files before the
// HF-shaped files), read with torch::serialize::InputArchive instead.
bool is_torchscript_archive(const std::filesystem::path& file);

}  // namespace trainhook
