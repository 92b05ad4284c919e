// SHA-256 of files and sha256sum's list format ("<64 hex>  <name>" per line,
// or " *" before the name as `sha256sum -b` writes), shared by the checkpoint
// manifest and the plugin lock file so either can be written or checked with
// sha256sum by hand. OpenSSL's libcrypto hashes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook {

// Hex SHA-256 of a file's bytes; throws std::runtime_error naming the file.
std::string sha256_of_file(const std::filesystem::path& file);

struct Sha256sumLine {
  std::string hash;  // 64 lower-case hex digits
  std::string name;  // as written
  int line = 0;      // 1-based
};

// Reads a sha256sum list; empty lines and lines starting with '#' are skipped.
// Throws std::runtime_error naming file:line for a line of another shape.
std::vector<Sha256sumLine> read_sha256sum_file(const std::filesystem::path& list);

}  // namespace trainhook
