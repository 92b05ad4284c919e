#include <trainhook/trainer/checkpoint_manifest.hpp>

#include <trainhook/trainer/atomic_file.hpp>

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

struct Entry {
  std::string hash;
  std::string name;  // relative to the checkpoint folder, '/'-separated
  int line = 0;
};

std::vector<Entry> read_manifest(const fs::path& manifest) {
  std::ifstream in(manifest, std::ios::binary);
  if (!in) throw std::runtime_error(manifest.string() + ": cannot be read");
  std::vector<Entry> entries;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    // "<64 hex>  <name>" (two spaces, or " *" for binary mode as sha256sum -b writes)
    const bool ok = line.size() > 66 && line[64] == ' ' && (line[65] == ' ' || line[65] == '*') &&
                    std::all_of(line.begin(), line.begin() + 64,
                                [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
    if (!ok)
      throw std::runtime_error(manifest.string() + ":" + std::to_string(n) +
                               ": not a line of '<sha256 hex>  <file name>'");
    const std::string name = line.substr(66);
    if (name.find("..") != std::string::npos || name.front() == '/')
      throw std::runtime_error(manifest.string() + ":" + std::to_string(n) + ": the file name '" + name +
                               "' leaves the checkpoint folder");
    entries.push_back({line.substr(0, 64), name, n});
  }
  return entries;
}

void check_entry(const fs::path& dir, const Entry& e) {
  const fs::path file = dir / e.name;
  std::error_code ec;
  if (!fs::is_regular_file(file, ec))
    throw std::runtime_error(file.string() + ": missing from the checkpoint (listed in " +
                             kCheckpointManifestFile + ")");
  if (sha256_of_file(file) != e.hash)
    throw std::runtime_error(
        file.string() +
        ": damaged: its SHA-256 differs from the one recorded when the checkpoint was saved "
        "(" +
        std::string(kCheckpointManifestFile) + " line " + std::to_string(e.line) +
        "); restore the file or use another checkpoint");
}

}  // namespace

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

void write_checkpoint_manifest(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = fs::relative(entry.path(), dir).generic_string();
    if (name == kCheckpointManifestFile) continue;
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  std::ostringstream text;
  for (const auto& name : names) text << sha256_of_file(dir / name) << "  " << name << "\n";
  write_text_atomically(dir / kCheckpointManifestFile, text.str());
}

bool verify_checkpoint_manifest(const fs::path& dir) {
  const fs::path manifest = dir / kCheckpointManifestFile;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return false;
  for (const auto& e : read_manifest(manifest)) check_entry(dir, e);
  return true;
}

bool verify_file_in_manifest(const fs::path& file) {
  const fs::path dir = file.parent_path().empty() ? fs::path(".") : file.parent_path();
  const fs::path manifest = dir / kCheckpointManifestFile;
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return false;
  for (const auto& e : read_manifest(manifest)) {
    if (e.name == file.filename().string()) {
      check_entry(dir, e);
      return true;
    }
  }
  return false;
}

}  // namespace trainhook
