// Writes .npy files byte by byte as NumPy's format describes them (the tests
// also damage them on purpose); NumPy itself writes the files of the CLI test.
#pragma once

#include <temp_dir.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trainhook::test {

// `name` in one folder per test process (each CTest case is one; the same name is
// the same file across the case's calls), removed when the process exits.
inline std::filesystem::path scratch(const std::string& name) {
  static const testkit::TempDir dir("trainhook-data");
  const auto p = dir.path / name;
  std::filesystem::create_directories(p.parent_path());
  return p;
}

// The header bytes: magic, version, length, the dict padded to 64 bytes with '\n' last.
inline std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape, int major = 1,
                              bool fortran = false) {
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': (" + dims + "), }";
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const auto len = static_cast<uint32_t>(dict.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + dict;
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

inline std::filesystem::path write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

template <class T>
std::filesystem::path write_npy(const std::string& name, const std::string& descr,
                                const std::vector<int64_t>& shape, const std::vector<T>& values,
                                int major = 1) {
  return write_bytes(scratch(name), npy_header(descr, shape, major) + bytes_of(values));
}

}  // namespace trainhook::test
