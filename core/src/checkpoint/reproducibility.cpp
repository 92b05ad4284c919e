#include <trainhook/checkpoint/reproducibility.hpp>

#include <trainhook/checkpoint/hf_rng_state_file.hpp>
#include <trainhook/checkpoint/serialize_archive_file.hpp>
#include <trainhook/checkpoint/torch_pickle_io.hpp>

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
  namespace fs = std::filesystem;
  torch::Tensor state;
  const fs::path hf = file.parent_path() / kHfRngStateFile;
  if (!fs::exists(file) && file.filename() == kRngStateFile && fs::exists(hf)) {
    state = load_hf_rng_state(hf);  // a checkpoint HF's Trainer wrote (one process)
  } else if (!fs::exists(file)) {
    throw std::runtime_error(file.string() + ": RNG state file is missing");
  } else if (file.extension() == ".pth" && !is_torchscript_archive(file)) {
    state = load_hf_rng_state(file);  // rng_state_<rank>.pth in HF's layout
  } else {
    torch::serialize::InputArchive archive;
    try {
      archive.load_from(file.string());
      archive.read("cpu_rng_state", state);
    } catch (const c10::Error& e) {
      throw std::runtime_error(file.string() + ": not an RNG state file (" + e.what_without_backtrace() +
                               ")");
    }
  }
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  try {
    gen.set_state(state);
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": not a CPU generator state (" + e.what_without_backtrace() +
                             ")");
  }
}

}  // namespace trainhook
