#include <trainhook/checkpoint/hf_rng_state_file.hpp>

#include <trainhook/checkpoint/torch_pickle_io.hpp>

#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

constexpr size_t kN = 624;

std::vector<uint32_t> init_genrand(uint32_t s) {
  std::vector<uint32_t> mt(kN);
  mt[0] = s;
  for (size_t i = 1; i < kN; ++i)
    mt[i] = 1812433253u * (mt[i - 1] ^ (mt[i - 1] >> 30)) + static_cast<uint32_t>(i);
  return mt;
}

}  // namespace

std::vector<uint32_t> numpy_seeded_mt19937(uint32_t seed) { return init_genrand(seed); }

std::vector<uint32_t> python_seeded_mt19937(uint64_t seed) {
  std::vector<uint32_t> key;
  do {
    key.push_back(static_cast<uint32_t>(seed & 0xffffffffu));
    seed >>= 32;
  } while (seed != 0);
  // CPython's init_by_array (Modules/_randommodule.c).
  std::vector<uint32_t> mt = init_genrand(19650218u);
  size_t i = 1, j = 0;
  for (size_t k = std::max(kN, key.size()); k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (size_t k = kN - 1; k > 0; --k) {
    mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      mt[0] = mt[kN - 1];
      i = 1;
    }
  }
  mt[0] = 0x80000000u;
  mt.push_back(static_cast<uint32_t>(kN));  // the position: a fresh state
  return mt;
}

void save_hf_rng_state(const torch::Tensor& cpu_state, int64_t seed, const fs::path& file) {
  namespace pv = pickle_values;
  const uint64_t magnitude = seed < 0 ? static_cast<uint64_t>(-(seed + 1)) + 1 : static_cast<uint64_t>(seed);
  std::vector<c10::IValue> words;
  for (uint32_t w : python_seeded_mt19937(magnitude)) words.emplace_back(static_cast<int64_t>(w));
  auto key = pv::list();
  for (uint32_t w : numpy_seeded_mt19937(static_cast<uint32_t>(static_cast<uint64_t>(seed) & 0xffffffffu)))
    key.push_back(static_cast<int64_t>(w));
  auto d = pv::dict_of_strings();
  d.insert("python", pv::tuple({int64_t{3}, pv::tuple(std::move(words)), c10::IValue()}));
  d.insert("numpy", pv::tuple({std::string("MT19937"), key, int64_t{624}, int64_t{0}, 0.0}));
  d.insert("cpu", cpu_state.detach().to(torch::kCPU).contiguous().clone());
  save_torch_pickle(d, file);
}

torch::Tensor load_hf_rng_state(const fs::path& file) {
  const TorchSaveFile f = read_torch_save_file(file);
  const PickleGraph& g = f.graph();
  const PickleNode* cpu = g.find(g.root(), "cpu");
  if (cpu == nullptr || cpu->kind != PickleNode::Kind::Tensor || cpu->tensor.dtype != "Byte")
    throw std::runtime_error(file.string() +
                             ": no \"cpu\" generator state (a uint8 tensor): not an RNG state file");
  return load_pickle_tensor(f, cpu->tensor);
}

}  // namespace trainhook
