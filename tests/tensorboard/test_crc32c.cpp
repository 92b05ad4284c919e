#include <trainhook/tensorboard/crc32c.hpp>

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace trainhook::tensorboard;

TEST_CASE("crc32c matches the Castagnoli check value and RFC 3720 vectors") {
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c_portable("123456789", 9) == 0xE3069283u);
  CHECK(crc32c("") == 0u);
  const std::string zeros(32, '\0');
  const std::string ones(32, '\xFF');
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  CHECK(crc32c(zeros) == 0x8A9136AAu);
  CHECK(crc32c(ones) == 0x62A8AB43u);
  CHECK(crc32c(ascending) == 0x46DD794Eu);
  CHECK(crc32c_portable(ascending.data(), ascending.size()) == 0x46DD794Eu);
}

TEST_CASE("masked crc32c matches TensorBoard's masking") {
  CHECK(mask_crc(0xE3069283u) == 0xC78AB0E5u);
  CHECK(mask_crc(crc32c("123456789")) == 0xC78AB0E5u);
}

TEST_CASE("crc32c continues across pieces and both implementations agree on any length") {
  std::mt19937 rng(42);
  std::string data(1000, '\0');
  for (auto& c : data) c = static_cast<char>(rng());
  for (size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 63u, 64u, 999u, 1000u}) {
    const uint32_t whole = crc32c(data.data(), n);
    CHECK(crc32c_portable(data.data(), n) == whole);
    const size_t half = n / 3;
    CHECK(crc32c(data.data() + half, n - half, crc32c(data.data(), half)) == whole);
    CHECK(crc32c_portable(data.data() + half, n - half, crc32c_portable(data.data(), half)) == whole);
  }
}
