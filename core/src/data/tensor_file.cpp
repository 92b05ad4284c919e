#include <trainhook/data/tensor_file.hpp>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>

namespace trainhook {

std::optional<std::string> newer_pytorch_message(const std::filesystem::path& file,
                                                 const std::string& reader_error) {
  std::smatch m;
  if (!std::regex_search(
          reader_error, m,
          std::regex("version (\\d+), but the maximum supported version for reading is (\\d+)"))) {
    return std::nullopt;
  }
  return file.string() +
         ": saved by a newer PyTorch than this LibTorch " TORCH_VERSION
         " reads: its file format version is " +
         m[1].str() + ", this LibTorch reads up to " + m[2].str() +
         ". Save it with PyTorch " TORCH_VERSION " (or older), or rebuild trainhook on a newer LibTorch";
}

std::vector<NamedTensor> read_tensor_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error(file.string() + ": cannot open the tensor file (missing or unreadable)");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string how =
      "; write it in Python with torch.save({\"input\": X, \"labels\": y}, path) (PyTorch >= 1.6, the "
      "default zip format)";
  if (bytes.size() < 4 || bytes[0] != 'P' || bytes[1] != 'K') {
    throw std::runtime_error(file.string() +
                             ": not a torch.save zip file (a legacy pickle or another format)" + how);
  }
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    msg = msg.substr(0, msg.find('\n'));
    if (auto newer = newer_pytorch_message(file, msg)) throw std::runtime_error(*newer);
    if (msg.find("Unknown opcode") != std::string::npos) {
      // Python pickles a one-entry dict with SETITEM, which LibTorch 1.13's unpickler lacks.
      throw std::runtime_error(file.string() + ": cannot read the tensor file (" + msg +
                               "): a dict of a single tensor is not readable by LibTorch " TORCH_VERSION
                               "; the file needs an input and a labels tensor" +
                               how);
    }
    throw std::runtime_error(file.string() + ": cannot read the tensor file (" + msg + ")" + how);
  }
  if (!value.isGenericDict()) {
    throw std::runtime_error(file.string() + ": holds a " + std::string(value.tagKind()) +
                             ", expected a dict of named tensors" + how);
  }
  std::vector<NamedTensor> out;
  for (const auto& e : value.toGenericDict()) {
    if (!e.key().isString()) {
      throw std::runtime_error(file.string() + ": a dict key is a " + std::string(e.key().tagKind()) +
                               ", expected string keys (tensor names)");
    }
    if (!e.value().isTensor()) {
      throw std::runtime_error(file.string() + ": '" + e.key().toStringRef() + "' is a " +
                               std::string(e.value().tagKind()) + ", expected a tensor");
    }
    out.emplace_back(e.key().toStringRef(), e.value().toTensor().contiguous());
  }
  if (out.empty()) throw std::runtime_error(file.string() + ": the dict holds no tensors" + how);
  return out;
}

}  // namespace trainhook
