// Gradient averaging over a process group, kept apart from the group itself
// (as c10d keeps reducer.cpp apart from ProcessGroup.cpp): the process group
// knows collectives, this file knows parameters, buckets and autograd hooks.
// MultiProcess (multi_process.hpp) picks one of the two ways below
// (TrainerOptions::gradient_reduction).
#pragma once

#include <trainhook/distributed/process_group.hpp>

#include <torch/types.h>

namespace torch::autograd {
struct Node;
}

#include <cstddef>
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

// DDP's reducer. Gradients are grouped into buckets as DDP's steady state
// does (parameters in reverse order, the order backward produces them; a
// bucket closes once it holds at least 1 MB for the first, `bucket_bytes`
// after), and each parameter's .grad lives in its bucket (DDP's
// gradient_as_bucket_view): backward accumulates straight into the flat
// buffer that is all-reduced, and the average is left there, so nothing is
// copied into or out of a bucket. A hook after each gradient's accumulation
// marks it ready (a .grad made elsewhere, e.g. after zero_grad(set_to_none),
// is copied into its bucket once and rebound to it).
//
// `overlap` (GradientReduction::overlap_with_backward): a bucket's all-reduce
// starts as soon as all its gradients are in, while backward goes on; buckets
// start strictly in bucket order, so every rank issues the same collectives in
// the same order. Otherwise every bucket starts in finish(). Only a backward
// after arm(true) is reduced (the last micro-step of an accumulation window);
// finish() starts the buckets left (parameters without a gradient this time
// count as zero, or as what they accumulated), waits, and divides by the
// world size. A parameter that no rank gave a gradient keeps an undefined
// .grad. The values equal average_gradients'.
class GradientReducer {
 public:
  GradientReducer(std::shared_ptr<ProcessGroup> group, std::vector<torch::Tensor> params,
                  int64_t bucket_bytes = 25LL * 1024 * 1024, bool overlap = true);
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;
  // Before loss.backward(): whether this backward ends an accumulation window
  // (only then are its gradients reduced).
  void arm(bool accumulation_boundary);
  // After backward, on an accumulation boundary: the averaged gradients in .grad.
  void finish();
  // The buckets' sizes in bytes, in the order they are all-reduced.
  std::vector<int64_t> bucket_bytes() const;

 private:
  struct Bucket;
  void on_gradient(size_t param);
  // .grad of `param` is its slot in the bucket (copied there first when it is not).
  void bind(size_t param);
  void launch_ready();
  std::shared_ptr<ProcessGroup> group_;
  std::vector<torch::Tensor> params_;
  std::vector<Bucket> buckets_;
  struct Place {
    size_t bucket = 0;
    size_t index = 0;    // in the bucket's params
    torch::Tensor slot;  // the parameter's view of its bucket
  };
  std::vector<Place> where_;  // per param
  // The parameters' AccumulateGrad nodes hold the hooks; a parameter keeps
  // only a weak reference to its node, so the reducer keeps them alive.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hooks_;
  size_t next_launch_ = 0;
  bool armed_ = false;
  bool overlap_ = true;
};

}  // namespace trainhook::distributed
