// The .npy header reader: NumPy's versions 1.0-3.0 and every damaged or
// unsupported header named with the file and what is wrong.
#include <trainhook/data/npy_header.hpp>

#include "npy_writer.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace trainhook;
using namespace trainhook::test;

namespace {

NpyHeader parse(const std::string& bytes) {
  return parse_npy_header(bytes.data(), bytes.size(), bytes.size(), "x.npy");
}

std::string error_of(const std::string& bytes) {
  try {
    parse(bytes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("versions 1.0 2.0 and 3.0 give the dtype shape and data offset") {
  for (int major : {1, 2, 3}) {
    CAPTURE(major);
    const std::string bytes = npy_header("<f4", {3, 2}, major) + std::string(24, '\0');
    const auto h = parse(bytes);
    CHECK(h.major_version == major);
    CHECK(h.type == NpyType::float32);
    CHECK(h.item_size == 4);
    CHECK(h.shape == std::vector<int64_t>{3, 2});
    CHECK(h.data_offset % 64 == 0);
    CHECK(h.data_offset + h.data_bytes == bytes.size());
  }
  CHECK(parse(npy_header("|u1", {5}) + std::string(5, 'a')).type == NpyType::uint8);
  CHECK(parse(npy_header("<u2", {0}) + "").data_bytes == 0);
  CHECK(parse(npy_header("<i8", {}) + std::string(8, '\0')).shape.empty());
  // Double quotes and no trailing comma are valid Python too.
  std::string dict = "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string v1 = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(dict.size()) + '\0' + dict;
  CHECK(parse(v1 + std::string(8, '\0')).shape == std::vector<int64_t>{2});
}

TEST_CASE("a truncated file names the bytes the shape needs") {
  const auto e = error_of(npy_header("<f4", {10}) + std::string(8, '\0'));
  CHECK(e.find("x.npy: truncated: shape (10,) of float32 needs 40 data bytes but the file has 8") == 0);
  CHECK(error_of(std::string("\x93NUMPY\x01", 7)).find("x.npy: not a .npy file") == 0);
}

TEST_CASE("a header that lies about its size is named") {
  std::string longer = npy_header("<f4", {1}) + std::string(4, '\0');
  longer[8] = static_cast<char>(0xff);  // says 0xff + 256 × byte 9 bytes, past the file's end
  longer[9] = 0x10;
  CHECK(error_of(longer).find("x.npy: the .npy header says it is 4351 bytes but the file has") == 0);
  std::string shorter = npy_header("<f4", {1}) + std::string(4, '\0');
  shorter[8] = static_cast<char>(shorter[8] - 16);  // ends inside the padding, not at the newline
  CHECK(error_of(shorter).find("does not end in a newline where its length") != std::string::npos);
  std::string cut = npy_header("<f4", {1});
  const size_t brace = cut.find('}');
  cut[brace] = ' ';  // the dict never closes within the header
  CHECK(error_of(cut + std::string(4, '\0')).find("x.npy: ") == 0);
}

TEST_CASE("a dtype that is not read lists the supported ones") {
  const auto e = error_of(npy_header("<c8", {1}) + std::string(8, '\0'));
  CHECK(e.find("x.npy: dtype '<c8' is not read (supported: <f2, <f4, <f8, |i1") == 0);
  CHECK(e.find("|b1") != std::string::npos);
  CHECK(error_of(npy_header(">f4", {1}) + std::string(4, '\0')).find("big-endian") != std::string::npos);
  CHECK(error_of(npy_header("<U3", {1}) + std::string(12, '\0')).find("'<U3' is not read") !=
        std::string::npos);
}

TEST_CASE("Fortran order and a bad version or shape are named") {
  CHECK(error_of(npy_header("<f4", {2, 2}, 1, true) + std::string(16, '\0')).find("Fortran order") !=
        std::string::npos);
  std::string v9 = npy_header("<f4", {1}) + std::string(4, '\0');
  v9[6] = 9;
  CHECK(error_of(v9).find("format version 9.0 is not read") != std::string::npos);
  std::string neg = npy_header("<f4", {1}) + std::string(4, '\0');
  neg.replace(neg.find("(1,)"), 4, "(-1,");
  CHECK(error_of(neg).find("shape: expected a non-negative integer") != std::string::npos);
  CHECK(error_of(npy_header("<f4", {int64_t{1} << 62, 8}) + std::string(4, '\0')).find("overflows") !=
        std::string::npos);
}
