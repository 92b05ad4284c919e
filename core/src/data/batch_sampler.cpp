// Per-epoch order: a permutation drawn from a generator seeded with
// seed + epoch (like DistributedSampler.set_epoch), padded by wrapping so every
// rank gets the same number of samples, then every world_size-th index from
// the rank's offset, cut into batches.
#include <trainhook/data/batch_sampler.hpp>

#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>

namespace trainhook {

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
  const int64_t world = options_.shard.world_size;
  per_rank_ = (dataset_size_ + world - 1) / world;
  batches_ = options_.drop_last ? per_rank_ / options_.batch_size
                                : (per_rank_ + options_.batch_size - 1) / options_.batch_size;
}

std::vector<torch::Tensor> BatchSampler::epoch_batches(int64_t epoch) const {
  torch::Tensor order;
  if (options_.shuffle) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(options_.seed + static_cast<uint64_t>(epoch));
    order = torch::randperm(dataset_size_, gen, torch::kLong);
  } else {
    order = torch::arange(dataset_size_, torch::kLong);
  }
  const int64_t world = options_.shard.world_size;
  const int64_t total = per_rank_ * world;
  if (total > dataset_size_ && dataset_size_ > 0) {
    order = torch::cat({order, order.narrow(0, 0, total - dataset_size_)});
  }
  if (world > 1) order = order.slice(0, options_.shard.rank, total, world).contiguous();
  std::vector<torch::Tensor> batches;
  batches.reserve(static_cast<size_t>(batches_));
  for (int64_t b = 0; b < batches_; ++b) {
    const int64_t start = b * options_.batch_size;
    const int64_t len = std::min(options_.batch_size, per_rank_ - start);
    batches.push_back(order.narrow(0, start, len));
  }
  return batches;
}

}  // namespace trainhook
