// libFuzzer target: the .npy header reader (core/src/data/npy_header.cpp) on
// arbitrary bytes must either return a header whose data lies inside the input
// or throw std::runtime_error; never crash, hang or read out of bounds.
#include <trainhook/data/npy_header.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto h = trainhook::parse_npy_header(reinterpret_cast<const char*>(data), size, size, "fuzz.npy");
    if (h.data_offset > size || h.data_bytes > size - h.data_offset) std::abort();
    if (h.data_bytes > 0) {
      // Touch the first and last data byte (ASan checks the bounds).
      volatile uint8_t first = data[h.data_offset];
      volatile uint8_t last = data[h.data_offset + h.data_bytes - 1];
      (void)first;
      (void)last;
    }
  } catch (const std::runtime_error&) {
  }
  return 0;
}
