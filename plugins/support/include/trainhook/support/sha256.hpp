// SHA-256 and HMAC-SHA256 on OpenSSL's libcrypto (no hand-written
// crypto). Any plugin may use it: the flyte plugin hashes checkpoint files for
// its manifests and S3 payloads (x-amz-content-sha256); its tests recompute
// SigV4 signatures. Failures of libcrypto throw std::runtime_error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace trainhook::support {

// Incremental hashing, for data that arrives in pieces.
class Sha256 {
 public:
  using Digest = std::array<uint8_t, 32>;
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Digest finish();  // the object must not be updated afterwards

 private:
  struct Free {
    void operator()(evp_md_ctx_st* ctx) const;
  };
  std::unique_ptr<evp_md_ctx_st, Free> ctx_;
};

std::string to_hex(const uint8_t* data, size_t size);  // lower case
inline std::string to_hex(const Sha256::Digest& d) { return to_hex(d.data(), d.size()); }

Sha256::Digest sha256(std::string_view data);
std::string sha256_hex(std::string_view data);
// Hex SHA-256 of a file's bytes, read in 64 KiB chunks (never the whole file at
// once). Throws std::runtime_error naming the file.
std::string sha256_file_hex(const std::filesystem::path& file);
Sha256::Digest hmac_sha256(std::string_view key, std::string_view message);

}  // namespace trainhook::support
