// Datasets whose tensors view memory-mapped files (data/mapped_file.hpp): no
// file is read whole and a batch is the only copy. Token files (.bin, as
// nanoGPT and llm.c write them, or 1-D integer .npy arrays) become windows of
// block_size + 1 tokens; folders of .npy arrays become named tensors.
#pragma once

#include <trainhook/data/mapped_file.hpp>
#include <trainhook/data/npy_header.hpp>
#include <trainhook/data/tensor_dataset.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// A .npy file's array as a tensor over the mapping (C order, the shape of the
// file; uint16/uint32 are stored as int16/int32 of the same bits, which
// widen_ids() turns into int64). The tensor keeps the mapping alive and must
// not be written. Throws std::runtime_error naming the file (npy_header.hpp).
struct MappedArray {
  torch::Tensor tensor;
  NpyHeader header;
  std::shared_ptr<const MappedFile> mapping;
};
MappedArray map_npy(const std::filesystem::path& file);

// int64 values of a tensor of `type` (the stored bits of uint16/uint32 are
// read as unsigned); other types are returned unchanged.
torch::Tensor widen_ids(const torch::Tensor& stored, NpyType type);

struct TokenFileOptions {
  int64_t block_size = 64;
  std::string token_dtype = "uint16";  // for .bin files without an llm.c header
  // true (training): a window starts at every token, drawn at random (the
  // dataset is epoch-less); false (evaluation): consecutive blocks, each once.
  bool every_offset = true;
  std::optional<int64_t> vocab_size;  // ids >= this are an error naming file and token
  // Resident bytes of mapped pages after which they are released (RSS stays
  // flat); files that together fit in 4 × this stay mapped.
  uint64_t resident_budget = 16ull << 20;
};

// One dataset over the token files, in order (shards). A window never crosses
// a file's end. Its tensors are stride-0 placeholders of the samples' shape:
// the batch hook copies each window straight from the mapping into the batch
// and, for files bigger than 4 × resident_budget, releases the pages it mapped. Inputs are the first block_size tokens, labels the next ones
// (shifted by one), both int64 in the batch. Throws std::runtime_error naming
// the file: a size that is no whole number of tokens, an llm.c header that
// disagrees with the size, shards with different token types, a float or
// multi-dimensional .npy, a file shorter than one block of block_size + 1.
std::shared_ptr<TensorDataset> token_dataset(const std::vector<std::string>& files,
                                             const TokenFileOptions& options);

// The largest token id of the files, read in a streamed pass (not mapped, so
// the resident set does not grow). Throws like token_dataset.
int64_t largest_token_id(const std::vector<std::string>& files, const std::string& token_dtype);

// One dataset over folders of .npy arrays (each folder a shard): the input is
// input.npy (or inputs, input_ids, x, features), the labels labels.npy (or
// label, y, target, targets), every other .npy rides along by its file name.
// Throws std::runtime_error naming the folder or file.
std::shared_ptr<TensorDataset> array_dataset(const std::vector<std::string>& folders,
                                             uint64_t resident_budget = 16ull << 20);

}  // namespace trainhook
