// rng_state.pth / rng_state_<rank>.pth as HF's Trainer saves them:
//   {"python": random.getstate(), "numpy": np.random.get_state(),
//    "cpu": torch.get_rng_state()}
// We have only the CPU generator; "python" and "numpy" are the states HF's
// set_seed(seed) leaves (random.seed(seed), np.random.seed(seed)), computed
// here, written as plain tuples and lists (torch.load's weights_only accepts
// them; random.setstate and np.random.set_state take them). Reading takes
// "cpu" and checks that the rest is what such files hold.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace trainhook {

inline constexpr const char* kHfRngStateFile = "rng_state.pth";

void save_hf_rng_state(const torch::Tensor& cpu_state, int64_t seed, const std::filesystem::path& file);

// The "cpu" generator state. Throws std::runtime_error naming the file.
torch::Tensor load_hf_rng_state(const std::filesystem::path& file);

// MT19937 states as Python and NumPy seed them (exposed for the tests):
// Python's random.seed(n): init_by_array of n's 32-bit words; 624 words + 624.
std::vector<uint32_t> python_seeded_mt19937(uint64_t seed);
// np.random.seed(n): init_genrand(n); 624 words (position 624).
std::vector<uint32_t> numpy_seeded_mt19937(uint32_t seed);

}  // namespace trainhook
