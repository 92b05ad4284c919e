// SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), written here because plugins
// link no crypto library. Used for checkpoint manifests, the S3
// x-amz-content-sha256 header and the SigV4 check in the tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainhook::flyte {

class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest finish();  // the object must not be updated afterwards

 private:
  void block(const uint8_t* p);
  std::array<uint32_t, 8> h_;
  std::array<uint8_t, 64> buf_{};
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

std::string to_hex(const uint8_t* data, size_t size);
inline std::string to_hex(const Sha256::Digest& d) { return to_hex(d.data(), d.size()); }

Sha256::Digest sha256(std::string_view data);
std::string sha256_hex(std::string_view data);
// Hex SHA-256 of a file's bytes, read in chunks. Throws std::runtime_error naming the file.
std::string sha256_file_hex(const std::filesystem::path& file);
Sha256::Digest hmac_sha256(std::string_view key, std::string_view message);

}  // namespace trainhook::flyte
