#include <trainhook/support/base64.hpp>

#include <cstdint>
#include <stdexcept>

namespace trainhook::support {
namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((size + 2) / 3 * 4);
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t n = (uint32_t(p[i]) << 16) | (i + 1 < size ? uint32_t(p[i + 1]) << 8 : 0) |
                       (i + 2 < size ? uint32_t(p[i + 2]) : 0);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < size ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < size ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::string base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) throw std::runtime_error("base64: length is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t n = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int v = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else if (pad > 0 || (v = value_of(c)) < 0) {
        throw std::runtime_error("base64: bad character at " + std::to_string(i + k));
      }
      n = (n << 6) | uint32_t(v);
    }
    out += char((n >> 16) & 255);
    if (pad < 2) out += char((n >> 8) & 255);
    if (pad < 1) out += char(n & 255);
  }
  return out;
}

}  // namespace trainhook::support
