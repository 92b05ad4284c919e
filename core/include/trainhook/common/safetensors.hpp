// The safetensors format (Hugging Face's weights file, model.safetensors):
// an 8-byte little-endian header length N, N bytes of JSON
//   {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//    "__metadata__": {"<key>": "<string>"}}
// then the tensors' raw little-endian bytes, offsets relative to the end of the
// header. No LibTorch here (the reader is fuzzed alone, fuzz/fuzz_safetensors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace trainhook::safetensors {

struct TensorEntry {
  std::string name;
  std::string dtype;  // F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL
  std::vector<int64_t> shape;
  uint64_t begin = 0;  // byte offsets into the data part
  uint64_t end = 0;
};

struct Header {
  std::vector<TensorEntry> tensors;  // in data order (by begin offset)
  std::map<std::string, std::string> metadata;
  uint64_t data_start = 0;  // 8 + N: where the data part begins in the file
};

// Bytes per element of a dtype name, 0 when the name is unknown.
size_t dtype_size(const std::string& dtype);

// Parses and checks a whole file held in memory: the header length fits the
// file, the header is a JSON object of the layout above, every dtype is known,
// every shape matches its byte range, and the ranges tile the data part with
// no overlap, gap or byte past its end. Throws std::runtime_error starting
// with `name` (the file) and saying what is wrong.
Header parse(const uint8_t* data, size_t size, const std::string& name);

// One tensor to write: `data` holds nbytes little-endian bytes.
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const void* data = nullptr;
  size_t nbytes = 0;
};

// Writes the tensors (in the given order) and metadata. The header is padded
// with spaces to a multiple of 8 bytes, as the reference writer does. Throws
// std::invalid_argument for an unknown dtype, a size that does not match the
// shape, or a duplicate name.
void write(std::ostream& out, const std::vector<TensorView>& tensors,
           const std::map<std::string, std::string>& metadata = {});

}  // namespace trainhook::safetensors
