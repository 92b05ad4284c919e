// Seeding and RNG state (HF set_seed / enable_full_determinism and the
// rng_state file of a checkpoint). Torch-free declarations so the CLI can seed
// before it builds a model.
#pragma once

#include <cstdint>
#include <filesystem>

namespace trainhook {

// The default CPU generator's state in a one-process checkpoint (save_rng_state).
inline constexpr const char* kRngStateFile = "rng_state.pt";

// Seeds LibTorch's default CPU generator and the C library's rand().
// full_determinism also makes LibTorch use deterministic algorithms only, so
// two runs with one seed give identical results on CPU.
void set_seed(int64_t seed, bool full_determinism = false);

// The default CPU generator's state, saved to / restored from a file.
void save_rng_state(const std::filesystem::path& file);
// Reads ours (rng_state.pt) and HF's (rng_state.pth, rng_state_<rank>.pth);
// rng_state.pt that is missing beside an rng_state.pth reads that (an HF
// checkpoint). Throws std::runtime_error naming the file when it is missing
// or not an RNG state.
void load_rng_state(const std::filesystem::path& file);

}  // namespace trainhook
