// A module whose weights file (a checkpoint's model.pt) has a format of its
// own rather than LibTorch's module archive: a TorchScript model keeps its
// torch.jit.load-able archive. Checkpoint I/O (checkpoint/checkpoint_io.hpp)
// saves and loads through it whenever the module it is given implements it,
// so it needs no concrete model type; the model that implements it owns the
// format. No LibTorch here.
#pragma once

#include <filesystem>

namespace trainhook {

class OwnWeightsFile {
 public:
  virtual ~OwnWeightsFile() = default;
  // Writes the current weights to `file`.
  virtual void save_weights(const std::filesystem::path& file) = 0;
  // Takes the weights of `file`, written by save_weights of a model of the
  // same architecture. Throws std::runtime_error naming the file on a mismatch.
  virtual void load_weights(const std::filesystem::path& file) = 0;
};

}  // namespace trainhook
