// libFuzzer target: the torch.save reader (core/src/checkpoint: the zip, the
// restricted pickle machine, the storage checks) on arbitrary bytes must give
// values whose every tensor lies inside its storage record, or throw
// std::runtime_error; never crash, hang, call anything or read out of bounds.
// The bytes are tried as a whole file and as a bare pickle.
#include <trainhook/checkpoint/pickle_reader.hpp>
#include <trainhook/checkpoint/torch_save_file.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const trainhook::TorchSaveFile f(bytes, "fuzz.pt");
    for (size_t i = 0; i < f.graph().size(); ++i) {
      const auto& n = f.graph().node(i);
      if (n.kind != trainhook::PickleNode::Kind::Tensor) continue;
      const std::string_view s = f.storage(n.tensor);
      const size_t element = trainhook::torch_storage_element_size(n.tensor.dtype);
      if (element == 0 || s.size() != static_cast<size_t>(n.tensor.storage_numel) * element) std::abort();
      if (!s.empty()) {
        volatile char first = s.front(), last = s.back();  // ASan checks the bounds
        (void)first;
        (void)last;
      }
    }
  } catch (const std::runtime_error&) {
  }
  try {
    const trainhook::PickleGraph g = trainhook::read_pickle(bytes, "fuzz.pkl");
    for (size_t i = 0; i < g.size(); ++i)
      for (size_t item : g.node(i).items)
        if (item >= g.size()) std::abort();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
