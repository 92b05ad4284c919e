// Gradient averaging over a process group, kept apart from the group itself
// (as c10d keeps reducer.cpp apart from ProcessGroup.cpp): the process group
// knows collectives, this file knows parameters, buckets and autograd hooks.
// MultiProcess (multi_process.hpp) picks one of the two ways below
// (TrainerOptions::gradient_reduction).
#pragma once

#include <trainhook/distributed/process_group.hpp>

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace trainhook::distributed {

// DDP's gradient averaging: gradients of `params` flattened into buckets of at
// most `bucket_bytes` (DDP's 25 MB), one sum all-reduce per bucket, divided by
// the world size and copied back. Parameters without a gradient are skipped
// (the same on every rank, as the model is the same).
void average_gradients(ProcessGroup& group, const std::vector<torch::Tensor>& params,
                       int64_t bucket_bytes = 25LL * 1024 * 1024);

// DDP's reducer, overlapping the all-reduce with backward: gradient hooks on
// the parameters copy each gradient into its bucket (parameters in reverse
// order, the order backward produces them; the first bucket up to 1 MB, the
// others up to `bucket_bytes`, as DDP's) and
// a bucket's all-reduce starts as soon as all its gradients are in, while
// backward goes on with earlier layers. Buckets start strictly in bucket order,
// so every rank issues the same collectives in the same order. Only a backward
// after arm(true) is reduced (the last micro-step of an accumulation window);
// finish() starts the buckets left (parameters without a gradient this time
// count as zero), waits, divides by the world size and writes the averages to
// .grad. The values equal average_gradients'.
class GradientReducer {
 public:
  GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<torch::Tensor> params,
                  int64_t bucket_bytes = 25LL * 1024 * 1024);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;
  // Before loss.backward(): whether this backward ends an accumulation window
  // (only then are its gradients reduced).
  void arm(bool accumulation_boundary);
  // After backward, on an accumulation boundary: the averaged gradients in .grad.
  void finish();

 private:
  struct Bucket;
  void on_gradient(size_t param, const torch::Tensor& grad);
  void launch_ready();
  std::shared_ptr<ProcessGroup> group_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<size_t, int64_t>> where_;  // param -> (bucket, offset)
  std::vector<unsigned> hooks_;
  size_t next_launch_ = 0;
  bool armed_ = false;
};

}  // namespace trainhook::distributed
