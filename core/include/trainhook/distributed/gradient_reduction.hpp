// How a multi-process run averages gradients (TrainerOptions::gradient_reduction).
// No LibTorch here: trainer.hpp includes it.
#pragma once

namespace trainhook::distributed {

enum class GradientReduction {
  // DDP's reducer (GradientReducer): buckets all-reduced while backward runs.
  overlap_with_backward,
  // One bucketed all-reduce after backward (average_gradients): the point of
  // comparison of bench/ddp's overlap ratio. Same values as the default.
  after_backward,
};

}  // namespace trainhook::distributed
