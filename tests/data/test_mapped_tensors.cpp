// Token files and .npy folders as datasets over memory mappings: windows,
// shards, widening of unsigned ids, no copy beyond the batch, and every bad
// file named with what is wrong.
#include <trainhook/data/mapped_tensors.hpp>

#include "npy_writer.hpp"

#include <doctest/doctest.h>

#include <numeric>
#include <stdexcept>

using namespace trainhook;
using namespace trainhook::test;

namespace {

std::vector<uint16_t> ids(int n, int start = 0) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<uint16_t>(start + i);
  return v;
}

std::string bin(const std::string& name, const std::vector<uint16_t>& v) {
  return write_bytes(scratch(name), bytes_of(v)).string();
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TokenFileOptions block(int64_t b, bool every_offset = true) {
  TokenFileOptions o;
  o.block_size = b;
  o.every_offset = every_offset;
  return o;
}

}  // namespace

TEST_CASE("a token file gives a window at every offset with labels shifted by one") {
  auto v = ids(10);
  v[3] = 60000;  // above int16: read as unsigned
  const auto file = bin("t.bin", v);
  const auto ds = token_dataset({file}, block(4));
  CHECK(ds->size() == 6);
  CHECK(ds->epochless());
  CHECK(ds->input_name() == "input_ids");
  const Batch b = ds->get(torch::tensor({2, 0, 5}, torch::kLong));
  CHECK(b.inputs.dtype() == torch::kLong);
  CHECK(torch::equal(b.inputs[0], torch::tensor({2, 60000, 4, 5}, torch::kLong)));
  CHECK(torch::equal(b.labels[0], torch::tensor({60000, 4, 5, 6}, torch::kLong)));
  CHECK(torch::equal(b.inputs[2], torch::tensor({5, 6, 7, 8}, torch::kLong)));
  CHECK(torch::equal(b.labels[2], torch::tensor({6, 7, 8, 9}, torch::kLong)));
  // The dataset's tensors view the mapping: nothing was copied to build them.
  CHECK_FALSE(ds->inputs().is_contiguous());
  CHECK(ds->inputs().numel() == 6 * 4);
  // Evaluation: consecutive blocks, each once.
  const auto eval = token_dataset({file}, block(4, false));
  CHECK(eval->size() == 2);
  CHECK_FALSE(eval->epochless());
  CHECK(torch::equal(eval->slice(1, 1).inputs[0], torch::tensor({4, 5, 6, 7}, torch::kLong)));
}

TEST_CASE("token shards join without a window across a file end") {
  const auto a = bin("s/shard_0.bin", ids(6));
  const auto b = bin("s/shard_1.bin", ids(7, 100));
  const auto ds = token_dataset({a, b}, block(3));
  CHECK(ds->size() == 3 + 4);
  CHECK(ds->shard_count() == 2);
  const Batch batch = ds->get(torch::tensor({3, 2, 6}, torch::kLong));
  CHECK(torch::equal(batch.inputs[0], torch::tensor({100, 101, 102}, torch::kLong)));
  CHECK(torch::equal(batch.inputs[1], torch::tensor({2, 3, 4}, torch::kLong)));
  CHECK(torch::equal(batch.labels[2], torch::tensor({104, 105, 106}, torch::kLong)));
  CHECK(ds->locate(4) == b + " sample 1");
  CHECK(largest_token_id({a, b}, "uint16") == 106);
}

TEST_CASE("uint32 token files and llm.c headers") {
  std::vector<uint32_t> wide = {70000, 1, 2, 3, 4};
  const auto w = write_bytes(scratch("w.bin"), bytes_of(wide)).string();
  TokenFileOptions o = block(2);
  o.token_dtype = "uint32";
  CHECK(token_dataset({w}, o)->get(torch::tensor({0}, torch::kLong)).inputs[0][0].item<int64_t>() == 70000);
  CHECK(largest_token_id({w}, "uint32") == 70000);
  std::vector<int32_t> header(256, 0);
  header[0] = 20240520;
  header[1] = 1;
  header[2] = 5;
  const auto llmc = write_bytes(scratch("llmc.bin"), bytes_of(header) + bytes_of(ids(5, 7))).string();
  CHECK(token_dataset({llmc}, block(2))->get(torch::tensor({0}, torch::kLong)).inputs[0][0].item<int64_t>() ==
        7);
  header[2] = 9;  // says 9 tokens, has 5
  const auto lying = write_bytes(scratch("lying.bin"), bytes_of(header) + bytes_of(ids(5))).string();
  CHECK(error_of([&] {
          token_dataset({lying}, block(2));
        }).find(lying + ": its llm.c header says 9 uint16 tokens") == 0);
  // Another header version, or a .npy renamed .bin: refused, never read as ids.
  header[1] = 7;
  header[2] = 5;
  const auto v7 = write_bytes(scratch("v7.bin"), bytes_of(header) + bytes_of(ids(5))).string();
  CHECK(error_of([&] {
          token_dataset({v7}, block(2));
        }).find(v7 + ": an llm.c token file of header version 7") == 0);
  const auto npy = write_npy("renamed/tokens.npy", "<u2", {64}, ids(64));
  const auto renamed = (npy.parent_path() / "tokens.bin").string();
  std::filesystem::rename(npy, renamed);
  CHECK(error_of([&] {
          token_dataset({renamed}, block(2));
        }).find(renamed + ": a NumPy .npy array with a .bin name") == 0);
}

TEST_CASE("bad token files are named with what is wrong") {
  const auto odd = write_bytes(scratch("odd.bin"), std::string(9, 'x')).string();
  CHECK(error_of([&] {
          token_dataset({odd}, block(2));
        }).find(odd + ": 9 bytes is not a whole number of uint16 tokens") == 0);
  const auto small = bin("small.bin", ids(4));
  CHECK(error_of([&] {
          token_dataset({small}, block(4));
        }).find(small + ": 4 tokens is shorter than one block of block_size 4 + 1") == 0);
  // Shards whose token types differ (a uint16 and a uint32 .npy).
  const auto n16 = write_npy("mix/a.npy", "<u2", {6}, ids(6)).string();
  const auto n32 = write_npy("mix/b.npy", "<u4", {6}, std::vector<uint32_t>(6, 1)).string();
  CHECK(error_of([&] {
          token_dataset({n16, n32}, block(2));
        }).find(n32 + ": its tokens are uint32 (from its .npy header) but " + n16 + " has uint16") == 0);
  const auto floats = write_npy("f.npy", "<f4", {6}, std::vector<float>(6, 1.0f)).string();
  CHECK(error_of([&] { token_dataset({floats}, block(2)); }).find("must be 1-D of integers") !=
        std::string::npos);
  // A token id at or above the model's vocabulary names the file and token.
  auto v = ids(12);
  v[9] = 500;
  const auto big = bin("vocab.bin", v);
  TokenFileOptions o = block(3);
  o.vocab_size = 100;
  const auto ds = token_dataset({big}, o);
  CHECK_NOTHROW(ds->get(torch::tensor({0, 1}, torch::kLong)));
  CHECK(error_of([&] {
          ds->get(torch::tensor({0, 7}, torch::kLong));
        }).find(big + ": token 9 has id 500, outside the model's vocabulary 0..99") == 0);
}

TEST_CASE("a truncated or unreadable .npy is named") {
  const auto cut = write_bytes(scratch("cut.npy"), npy_header("<f4", {4, 2}) + std::string(12, '\0'));
  CHECK(error_of([&] {
          map_npy(cut);
        }).find(cut.string() + ": truncated: shape (4, 2) of float32 needs 32") == 0);
  const auto complex = write_bytes(scratch("c.npy"), npy_header("<c16", {1}) + std::string(16, '\0'));
  CHECK(error_of([&] { map_npy(complex); }).find("dtype '<c16' is not read (supported:") !=
        std::string::npos);
}

TEST_CASE("a folder of .npy arrays maps input labels and extras") {
  std::vector<float> x(12);
  std::iota(x.begin(), x.end(), 0.0f);
  write_npy("arr/a/input.npy", "<f4", {4, 3}, x);
  write_npy("arr/a/labels.npy", "|u1", {4}, std::vector<uint8_t>{0, 1, 2, 1});
  write_npy("arr/a/length.npy", "<i8", {4}, std::vector<int64_t>{3, 1, 2, 3});
  write_npy("arr/b/input.npy", "<f4", {2, 3}, std::vector<float>(6, 9.0f));
  write_npy("arr/b/labels.npy", "|u1", {2}, std::vector<uint8_t>{2, 0});
  write_npy("arr/b/length.npy", "<i8", {2}, std::vector<int64_t>{5, 6});
  const auto a = scratch("arr/a").string(), b = scratch("arr/b").string();
  const auto ds = array_dataset({a, b});
  CHECK(ds->size() == 6);
  const Batch batch = ds->get(torch::tensor({1, 4}, torch::kLong));
  CHECK(torch::equal(batch.inputs[0], torch::tensor({3.0f, 4.0f, 5.0f})));
  CHECK(torch::equal(batch.inputs[1], torch::tensor({9.0f, 9.0f, 9.0f})));
  CHECK(batch.labels.dtype() == torch::kLong);
  CHECK(torch::equal(batch.labels, torch::tensor({1, 2}, torch::kLong)));
  CHECK(torch::equal(ds->column("length"), torch::tensor({3, 1, 2, 3, 5, 6}, torch::kLong)));
  // Shards with different dtypes: the second folder's file is named.
  write_npy("arr/c/input.npy", "<f8", {1, 3}, std::vector<double>(3, 1.0));
  write_npy("arr/c/labels.npy", "|u1", {1}, std::vector<uint8_t>{0});
  write_npy("arr/c/length.npy", "<i8", {1}, std::vector<int64_t>{1});
  const auto c = scratch("arr/c").string();
  CHECK(error_of([&] {
          array_dataset({a, c});
        }).find(scratch("arr/c/input.npy").string() + ": dtype float64 differs from float32") == 0);
  write_npy("arr/d/input.npy", "<f4", {1, 3}, std::vector<float>(3, 1.0f));
  const auto d = scratch("arr/d").string();
  CHECK(error_of([&] { array_dataset({d}); }).find(d + ": a folder of .npy arrays needs labels") == 0);
}
