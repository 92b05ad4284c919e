// libFuzzer target: the safetensors reader (core/src/common/safetensors.cpp)
// on arbitrary bytes must either return a header whose every range lies inside
// the input or throw std::runtime_error; never crash, hang or read out of bounds.
#include <trainhook/common/safetensors.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto h = trainhook::safetensors::parse(data, size, "fuzz.safetensors");
    for (const auto& t : h.tensors) {
      if (t.end < t.begin || h.data_start + t.end > size) std::abort();
      // Touch the first and last byte of each tensor (ASan checks the bounds).
      if (t.end > t.begin) {
        volatile uint8_t first = data[h.data_start + t.begin];
        volatile uint8_t last = data[h.data_start + t.end - 1];
        (void)first;
        (void)last;
      }
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
