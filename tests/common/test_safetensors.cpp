// The safetensors reader and writer (core/src/common/safetensors.cpp): a round
// trip, and every malformed file a clear error naming the file, no crash.
#include <trainhook/common/safetensors.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace st = trainhook::safetensors;

namespace {

std::vector<uint8_t> file_of(const std::string& header, size_t data_bytes) {
  std::vector<uint8_t> out(8 + header.size() + data_bytes, 0);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<uint8_t>((n >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

std::string error_of(const std::vector<uint8_t>& bytes) {
  try {
    st::parse(bytes.data(), bytes.size(), "w.safetensors");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::vector<uint8_t> written() {
  const float a[6] = {1, 2, 3, 4, 5, 6};
  const int64_t b[2] = {-7, 8};
  std::ostringstream out;
  st::write(out, {{"a", "F32", {2, 3}, a, sizeof a}, {"b", "I64", {2}, b, sizeof b}}, {{"format", "pt"}});
  const std::string s = out.str();
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace

TEST_CASE("a written file parses back with its tensors, shapes, bytes and metadata") {
  const auto bytes = written();
  const auto h = st::parse(bytes.data(), bytes.size(), "w.safetensors");
  REQUIRE(h.tensors.size() == 2);
  CHECK(h.data_start % 8 == 0);
  CHECK(h.tensors[0].name == "a");
  CHECK(h.tensors[0].shape == std::vector<int64_t>{2, 3});
  CHECK(h.tensors[1].dtype == "I64");
  CHECK(h.metadata.at("format") == "pt");
  float a[6];
  std::memcpy(a, bytes.data() + h.data_start + h.tensors[0].begin, sizeof a);
  CHECK(a[5] == 6.0f);
  int64_t b[2];
  std::memcpy(b, bytes.data() + h.data_start + h.tensors[1].begin, sizeof b);
  CHECK(b[0] == -7);
}

TEST_CASE("a truncated file is an error naming the file") {
  const auto bytes = written();
  for (size_t cut : {size_t{0}, size_t{5}, size_t{12}, bytes.size() - 1}) {
    const std::vector<uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const std::string e = error_of(part);
    CAPTURE(cut);
    CHECK(e.find("w.safetensors") == 0);
  }
  CHECK(error_of({1, 2, 3}).find("truncated") != std::string::npos);
}

TEST_CASE("a header length past the end of the file is an error") {
  auto bytes = file_of("{}", 0);
  bytes[0] = 0xff;
  bytes[3] = 0x7f;
  CHECK(error_of(bytes).find("runs past the end") != std::string::npos);
}

TEST_CASE("overlapping offsets, gaps and short ranges are errors") {
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                         12))
            .find("overlaps") != std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8)).find("gap") !=
        std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8))
            .find("do not hold its shape") != std::string::npos);
  CHECK(
      error_of(file_of(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 16)).find("cover 8 of") !=
      std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8))
            .find("past the end of the data") != std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[4611686018427387904,8],"data_offsets":[0,8]}})", 8))
            .find("do not hold") != std::string::npos);
}

TEST_CASE("an unknown dtype and malformed JSON are errors") {
  CHECK(error_of(file_of(R"({"a":{"dtype":"F8_E9","shape":[1],"data_offsets":[0,1]}})", 1))
            .find("unknown dtype 'F8_E9'") != std::string::npos);
  CHECK(error_of(file_of(R"({"a":)", 0)).find("not JSON") != std::string::npos);
  CHECK(error_of(file_of(R"([1,2])", 0)).find("JSON object") != std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0)).find("shape") !=
        std::string::npos);
  CHECK(error_of(file_of(R"({"a":{"dtype":"F32","shape":[1]}})", 4)).find("lacks") != std::string::npos);
  CHECK(error_of(file_of(R"({"__metadata__":{"k":1}})", 0)).find("__metadata__") != std::string::npos);
}

TEST_CASE("the writer refuses an unknown dtype, a wrong size and a duplicate name") {
  const float a[2] = {1, 2};
  std::ostringstream out;
  CHECK_THROWS_AS(st::write(out, {{"a", "Q7", {2}, a, sizeof a}}), std::invalid_argument);
  CHECK_THROWS_AS(st::write(out, {{"a", "F32", {3}, a, sizeof a}}), std::invalid_argument);
  CHECK_THROWS_AS(st::write(out, {{"a", "F32", {2}, a, sizeof a}, {"a", "F32", {2}, a, sizeof a}}),
                  std::invalid_argument);
}
