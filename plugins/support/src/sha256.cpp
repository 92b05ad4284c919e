// SHA-256 / HMAC-SHA256 through libcrypto's EVP interface (see sha256.hpp).
#include <trainhook/support/sha256.hpp>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <fstream>
#include <stdexcept>
#include <vector>

namespace trainhook::support {
namespace {

// The reason libcrypto gives for its last failure.
[[noreturn]] void fail(const char* what) {
  char reason[256] = "unknown error";
  if (const unsigned long code = ERR_get_error(); code != 0) ERR_error_string_n(code, reason, sizeof reason);
  throw std::runtime_error(std::string("SHA-256: ") + what + " failed: " + reason);
}

}  // namespace

void Sha256::Free::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) fail("EVP_MD_CTX_new");
  if (EVP_DigestInit_ex(ctx_.get(), EVP_sha256(), nullptr) != 1) fail("EVP_DigestInit_ex");
}

void Sha256::update(const void* data, size_t size) {
  if (size > 0 && EVP_DigestUpdate(ctx_.get(), data, size) != 1) fail("EVP_DigestUpdate");
}

Sha256::Digest Sha256::finish() {
  Sha256::Digest d{};
  unsigned int n = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), d.data(), &n) != 1 || n != d.size()) fail("EVP_DigestFinal_ex");
  return d;
}

std::string to_hex(const uint8_t* data, size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(2 * size, '0');
  for (size_t i = 0; i < size; ++i) {
    s[2 * i] = kDigits[data[i] >> 4];
    s[2 * i + 1] = kDigits[data[i] & 15];
  }
  return s;
}

Sha256::Digest sha256(std::string_view data) {
  Sha256::Digest d{};
  unsigned int n = 0;
  if (EVP_Digest(data.data(), data.size(), d.data(), &n, EVP_sha256(), nullptr) != 1 || n != d.size())
    fail("EVP_Digest");
  return d;
}

std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }

std::string sha256_file_hex(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + file.string() + "' to hash it");
  Sha256 h;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) h.update(buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw std::runtime_error("read error while hashing '" + file.string() + "'");
  return to_hex(h.finish());
}

Sha256::Digest hmac_sha256(std::string_view key, std::string_view message) {
  Sha256::Digest d{};
  unsigned int n = 0;
  // HMAC() (one shot) is not among OpenSSL 3's deprecated HMAC_CTX calls.
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), d.data(), &n) == nullptr ||
      n != d.size())
    fail("HMAC");
  return d;
}

}  // namespace trainhook::support
