// model.safetensors through LibTorch (checkpoint/safetensors_io): the weights
// round-trip by state-dict name, and a save replaces the file through a new
// one (a kill mid-write leaves the earlier file whole, never a cut one that a
// restart of a finished run would keep). What Python's safetensors makes of
// the file: tests/models/torchscript_cli.py and tests/trainer/hf_resume_check.py.
#include <trainhook/checkpoint/safetensors_io.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <torch/torch.h>

#include <fstream>
#include <iterator>
#include <string>

using namespace trainhook;
using trainhook::testkit::TempDir;
namespace fs = std::filesystem;

namespace {

std::string bytes_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("model.safetensors round-trips parameters and buffers by state-dict name") {
  TempDir tmp("th_safetensors_io");
  torch::manual_seed(3);
  torch::nn::Sequential a(torch::nn::Linear(4, 3), torch::nn::BatchNorm1d(3));
  a->ptr(1)->named_buffers()["running_mean"].fill_(0.25);
  save_safetensors(*a, tmp.path / kSafetensorsFile);
  torch::nn::Sequential b(torch::nn::Linear(4, 3), torch::nn::BatchNorm1d(3));
  load_safetensors(*b, tmp.path / kSafetensorsFile);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (const auto& p : pa) CHECK(torch::equal(p.value(), pb[p.key()]));
  CHECK(torch::equal(b->named_buffers()["1.running_mean"], torch::full({3}, 0.25)));
}

TEST_CASE("a save writes a new file and renames it over the old one, never rewriting it in place") {
  TempDir tmp("th_safetensors_io");
  const fs::path file = tmp.path / kSafetensorsFile;
  torch::nn::Linear small(2, 1), large(64, 64);
  save_safetensors(*small, file);
  const std::string before = bytes_of(file);
  // A second name for the old file's bytes: written in place (truncated, then
  // written), the old file would change under it; replaced, it keeps them.
  const fs::path link = tmp.path / "old.safetensors";
  fs::create_hard_link(file, link);
  save_safetensors(*large, file);
  CHECK(bytes_of(link) == before);
  CHECK(bytes_of(file) != before);
  CHECK(fs::file_size(file) > fs::file_size(link));
  // Nothing but the two names is left in the folder (no temporary).
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path)) ++entries;
  CHECK(entries == 2);
}
