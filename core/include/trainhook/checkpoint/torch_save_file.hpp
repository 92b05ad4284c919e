// A file written by Python's torch.save (or our HF-shaped writer): the zip
// (torch_zip_reader.hpp) with "<archive>/data.pkl" read by the restricted
// pickle reader (pickle_reader.hpp), and each tensor's bytes checked against
// its storage record. No LibTorch here; hf_checkpoint_files.hpp makes tensors.
#pragma once

#include <trainhook/checkpoint/pickle_reader.hpp>
#include <trainhook/checkpoint/torch_zip_reader.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace trainhook {

class TorchSaveFile {
 public:
  // Throws std::runtime_error starting with `name`: not a zip, no data.pkl,
  // a refused pickle, a tensor whose storage record is missing, has another
  // size than its element count says, or does not hold the tensor's extent.
  TorchSaveFile(std::string bytes, const std::string& name);

  const PickleGraph& graph() const { return graph_; }
  const std::string& name() const { return name_; }
  // The bytes of a Tensor node's storage (checked at load).
  std::string_view storage(const PickleTensor& t) const;

 private:
  std::unique_ptr<const std::string> bytes_;  // the zip's views point into it
  std::string name_;
  TorchZip zip_;
  std::string prefix_;  // "<archive>/"
  PickleGraph graph_;
};

// Reads the file whole; throws std::runtime_error naming it.
TorchSaveFile read_torch_save_file(const std::filesystem::path& file);

// Bytes per element of a storage dtype ("Float" -> 4), 0 when unknown.
size_t torch_storage_element_size(const std::string& dtype);

}  // namespace trainhook
