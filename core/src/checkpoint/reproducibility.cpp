#include <trainhook/checkpoint/reproducibility.hpp>

#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>

namespace trainhook {

void set_seed(int64_t seed, bool full_determinism) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  std::srand(static_cast<unsigned>(seed));
  if (full_determinism) at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
}

void save_rng_state(const std::filesystem::path& file) {
  auto gen = at::detail::getDefaultCPUGenerator();
  torch::Tensor state;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    state = gen.get_state();
  }
  torch::serialize::OutputArchive archive;
  archive.write("cpu_rng_state", state);
  save_archive_atomically(archive, file);  // a full disk: our error, not terminate
}

void load_rng_state(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) throw std::runtime_error(file.string() + ": RNG state file is missing");
  torch::serialize::InputArchive archive;
  torch::Tensor state;
  try {
    archive.load_from(file.string());
    archive.read("cpu_rng_state", state);
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": not an RNG state file (" + e.what_without_backtrace() + ")");
  }
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace trainhook
