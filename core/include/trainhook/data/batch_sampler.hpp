// The order in which a process sees its samples, epoch by epoch. The order of
// an epoch depends only on (seed, epoch, rank, world size), never on what ran
// before, so a resumed run recomputes it and skips the batches it consumed.
// Throws std::invalid_argument for a bad batch size or shard, or lengths that
// are not one per sample.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace trainhook {

// Which part of the data this process sees (rank of world_size).
struct Shard {
  int32_t rank = 0;
  int32_t world_size = 1;
};

struct SamplerOptions {
  int64_t batch_size = 8;
  bool shuffle = true;
  bool drop_last = false;
  uint64_t seed = 42;
  Shard shard;
  // > 0: epoch-less sampling (a token stream). Every epoch has this many batches,
  // batch i drawing world_size × batch_size indices with replacement from a
  // generator seeded with (seed, epoch, i), this rank taking every
  // world_size-th from its offset. A resumed run recomputes any batch alone.
  int64_t stream_batches = 0;
  // group_by_length: one length per sample (HF's LengthGroupedSampler: each
  // epoch's permutation cut into megabatches of 50 batches, each sorted by
  // length, the longest sample first). Undefined: off.
  torch::Tensor lengths;
};

class BatchSampler {
 public:
  // Throws std::invalid_argument for batch_size < 1 or a bad shard.
  BatchSampler(int64_t dataset_size, SamplerOptions options);
  // Batches per epoch for this process.
  int64_t batches_per_epoch() const noexcept { return batches_; }
  // Samples per epoch for this process.
  int64_t samples_per_epoch() const noexcept { return per_rank_; }
  // The index tensors of every batch of `epoch` for this process.
  std::vector<torch::Tensor> epoch_batches(int64_t epoch) const;

 private:
  int64_t dataset_size_;
  SamplerOptions options_;
  int64_t per_rank_ = 0;
  int64_t batches_ = 0;
};

}  // namespace trainhook
