// The zip container of torch.save (and LibTorch's PyTorchStreamWriter): every
// record stored uncompressed, "<archive>/data.pkl" and "<archive>/data/<key>".
// A reader of the central directory only, for files from anyone: every offset
// and size is checked against the file before a byte is used. No LibTorch
// here (fuzzed alone with the pickle reader, fuzz/fuzz_torch_pickle).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace trainhook {

struct TorchZip {
  // Record name (as stored, "archive/data.pkl") -> its bytes inside the input.
  std::map<std::string, std::string_view> records;
  // Compressed records (a TorchScript archive's code/): named, never read.
  std::set<std::string> compressed;
};

// Throws std::runtime_error starting with `file` and saying what is wrong: not
// a zip, truncated, a record or the directory past the end
// of the file, a duplicate name. `bytes` must outlive the result.
TorchZip read_torch_zip(std::string_view bytes, const std::string& file);

// True when the bytes start like a zip file (a local file header).
bool looks_like_zip(std::string_view bytes);

}  // namespace trainhook
