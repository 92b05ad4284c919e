#include <trainhook/common/sha256sum.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {

std::string sha256_of_file(const fs::path& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(file.string() + ": cannot be read to check its SHA-256");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  std::vector<unsigned char> buf(1 << 16);
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) EVP_DigestUpdate(ctx.get(), buf.data(), n);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) throw std::runtime_error(file.string() + ": read error while checking its SHA-256");
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

std::vector<Sha256sumLine> read_sha256sum_file(const fs::path& list) {
  std::ifstream in(list, std::ios::binary);
  if (!in) throw std::runtime_error(list.string() + ": cannot be read");
  std::vector<Sha256sumLine> entries;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.front() == '#') continue;
    const bool ok = line.size() > 66 && line[64] == ' ' && (line[65] == ' ' || line[65] == '*') &&
                    std::all_of(line.begin(), line.begin() + 64,
                                [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (!ok)
      throw std::runtime_error(list.string() + ":" + std::to_string(n) +
                               ": not a line of '<sha256 hex>  <file name>' (sha256sum's format)");
    entries.push_back({line.substr(0, 64), line.substr(66), n});
  }
  return entries;
}

}  // namespace trainhook
