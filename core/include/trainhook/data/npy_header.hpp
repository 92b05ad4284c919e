// The header of a NumPy .npy file (NumPy's documented format, versions 1.0,
// 2.0 and 3.0): the magic, the header length, the dict with descr,
// fortran_order and shape. No LibTorch here (the fuzz target and the
// sanitizer build use it alone); data/mapped_tensors.hpp maps the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trainhook {

// The element types read (little-endian or byte-sized).
enum class NpyType { float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, boolean };

struct NpyHeader {
  int major_version = 1;
  std::string descr;  // as written, e.g. "<f4"
  NpyType type = NpyType::float32;
  size_t item_size = 4;        // bytes per element
  std::vector<int64_t> shape;  // () for a scalar
  size_t data_offset = 0;      // where the raw data starts
  size_t data_bytes = 0;       // item_size × the product of the shape
};

// The supported dtypes as a list for messages: "<f2, <f4, ...".
std::string npy_supported_dtypes();
// The name of a type as NumPy calls it (float32, uint16, ...).
std::string npy_type_name(NpyType type);

// Parses the header at the start of `data` (the file's first `size` bytes,
// or all of it). `file_size` is the whole file's size: the data must fit.
// Throws std::runtime_error naming `file` and what is wrong: no magic, an
// unknown version, a header length beyond the file, a header that does not
// end in a newline where its length says, a dict that is not NumPy's, a dtype
// not read (the supported ones listed), Fortran order, a negative or
// overflowing shape, data shorter than the shape needs (truncated).
NpyHeader parse_npy_header(const char* data, size_t size, uint64_t file_size, const std::string& file);

}  // namespace trainhook
