// Per-epoch order: a permutation drawn from a generator seeded with
// seed + epoch (like DistributedSampler.set_epoch), padded by wrapping so every
// rank gets the same number of samples, then every world_size-th index from
// the rank's offset, cut into batches. group_by_length reorders the
// permutation as HF's get_length_grouped_indices before the cut. A stream
// (stream_batches > 0) draws every batch on its own instead.
#include <trainhook/data/batch_sampler.hpp>

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <stdexcept>

namespace trainhook {
namespace {

// SplitMix64: decorrelated generator seeds for (seed, epoch, batch).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// HF's get_length_grouped_indices: megabatches of mega × batch_size samples of
// the permutation, each sorted by length (longest first, stable), and the
// megabatch holding the longest sample swaps its head to the front.
torch::Tensor length_grouped(const torch::Tensor& order, const torch::Tensor& lengths, int64_t batch_size) {
  const int64_t n = order.numel();
  int64_t mega = std::min<int64_t>(n / (batch_size * 4), 50);
  if (mega == 0) mega = 1;
  const int64_t size = mega * batch_size;
  const auto ord = order.contiguous();
  const auto len = lengths.to(torch::kLong).contiguous();
  const int64_t* o = ord.data_ptr<int64_t>();
  const int64_t* l = len.data_ptr<int64_t>();
  std::vector<std::vector<int64_t>> megabatches;
  for (int64_t start = 0; start < n; start += size) {
    std::vector<int64_t> m(o + start, o + std::min(n, start + size));
    std::stable_sort(m.begin(), m.end(), [&](int64_t a, int64_t b) { return l[a] > l[b]; });
    megabatches.push_back(std::move(m));
  }
  size_t max_idx = 0;
  for (size_t i = 1; i < megabatches.size(); ++i) {
    if (l[megabatches[i][0]] > l[megabatches[max_idx][0]]) max_idx = i;
  }
  if (!megabatches.empty()) std::swap(megabatches[0][0], megabatches[max_idx][0]);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  for (const auto& m : megabatches) out.insert(out.end(), m.begin(), m.end());
  return torch::tensor(out, torch::kLong);
}

}  // namespace

BatchSampler::BatchSampler(int64_t dataset_size, SamplerOptions options)
    : dataset_size_(dataset_size), options_(options) {
  if (options_.batch_size < 1) {
    throw std::invalid_argument("batch size must be >= 1, got " + std::to_string(options_.batch_size));
  }
  if (options_.shard.world_size < 1 || options_.shard.rank < 0 ||
      options_.shard.rank >= options_.shard.world_size) {
    throw std::invalid_argument("bad data shard: rank " + std::to_string(options_.shard.rank) + " of " +
                                std::to_string(options_.shard.world_size));
  }
  if (options_.lengths.defined() && options_.lengths.numel() != dataset_size_) {
    throw std::invalid_argument("group_by_length: " + std::to_string(options_.lengths.numel()) +
                                " lengths for " + std::to_string(dataset_size_) + " samples");
  }
  const int64_t world = options_.shard.world_size;
  if (options_.stream_batches > 0) {
    if (dataset_size_ < 1) throw std::invalid_argument("a sample stream needs at least one sample");
    per_rank_ = options_.stream_batches * options_.batch_size;
    batches_ = options_.stream_batches;
    return;
  }
  per_rank_ = (dataset_size_ + world - 1) / world;
  batches_ = options_.drop_last ? per_rank_ / options_.batch_size
                                : (per_rank_ + options_.batch_size - 1) / options_.batch_size;
}

std::vector<torch::Tensor> BatchSampler::epoch_batches(int64_t epoch) const {
  const int64_t world = options_.shard.world_size;
  std::vector<torch::Tensor> batches;
  batches.reserve(static_cast<size_t>(batches_));
  if (options_.stream_batches > 0) {
    // Every batch from its own generator: the same draws whatever the rank
    // count, each rank taking its stride of them (2 ranks × B = 1 rank × 2B).
    const uint64_t epoch_key = mix(options_.seed ^ mix(static_cast<uint64_t>(epoch)));
    for (int64_t b = 0; b < batches_; ++b) {
      auto gen = at::make_generator<at::CPUGeneratorImpl>(mix(epoch_key + static_cast<uint64_t>(b)));
      auto draw = torch::randint(dataset_size_, {options_.batch_size * world}, gen, torch::kLong);
      batches.push_back(world > 1 ? draw.slice(0, options_.shard.rank, draw.numel(), world).contiguous()
                                  : draw);
    }
    return batches;
  }
  torch::Tensor order;
  if (options_.shuffle) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(options_.seed + static_cast<uint64_t>(epoch));
    order = torch::randperm(dataset_size_, gen, torch::kLong);
  } else {
    order = torch::arange(dataset_size_, torch::kLong);
  }
  if (options_.lengths.defined()) {
    // Megabatches of the global batch, so every rank's batches stay length-grouped.
    order = length_grouped(order, options_.lengths, options_.batch_size * world);
  }
  const int64_t total = per_rank_ * world;
  if (total > dataset_size_ && dataset_size_ > 0) {
    order = torch::cat({order, order.narrow(0, 0, total - dataset_size_)});
  }
  if (world > 1) order = order.slice(0, options_.shard.rank, total, world).contiguous();
  for (int64_t b = 0; b < batches_; ++b) {
    const int64_t start = b * options_.batch_size;
    const int64_t len = std::min(options_.batch_size, per_rank_ - start);
    batches.push_back(order.narrow(0, start, len));
  }
  return batches;
}

}  // namespace trainhook
