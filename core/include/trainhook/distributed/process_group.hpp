// trainhook's view of a c10d process group: the few collectives the trainer
// needs (sum/max all-reduce, broadcast from a root, barrier, gathering rows in
// rank order). All c10d calls live in core/src/distributed/process_group.cpp,
// so the API differences between LibTorch 1.13 (ProcessGroupGloo derives from
// ProcessGroup) and 2.x (from Backend) stay in one file.
//
// Every collective must be called by every rank in the same order. A failure
// (a peer that died, a timeout after ddp_timeout) throws CollectiveError with
// this rank, the operation and the cause; the process group is unusable after.
#pragma once

#include <trainhook/args/strategies.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/distributed/launch_env.hpp>

#include <torch/types.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook::distributed {

class ProcessGroup {
 public:
  // Rendezvous over a TCPStore at MASTER_ADDR:MASTER_PORT served by rank 0
  // (MASTER_PORT + 1 under torchrun, whose agent holds MASTER_PORT), then a Gloo group over the interface
  // that routes to MASTER_ADDR (GLOO_SOCKET_IFNAME overrides). nccl needs a CUDA LibTorch and throws here.
  // Throws CollectiveError when the rendezvous does not complete in `timeout`.
  static std::shared_ptr<ProcessGroup> create(const LaunchEnv& env, DdpBackend backend,
                                              std::chrono::seconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  std::chrono::seconds timeout() const noexcept;

  // In place, element-wise over all ranks.
  void all_reduce_sum(std::vector<torch::Tensor>& tensors, const char* what);
  // Starts a sum all-reduce of `flat` in place and returns without waiting;
  // wait() on the handle (in the order started) before reading `flat`.
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    void wait();
    struct Impl;

   private:
    friend class ProcessGroup;
    std::unique_ptr<Impl> impl_;
  };
  Pending start_all_reduce_sum(torch::Tensor flat, const char* what);
  void all_reduce_max(std::vector<torch::Tensor>& tensors, const char* what);
  void broadcast(std::vector<torch::Tensor>& tensors, int root, const char* what);
  void barrier(const char* what);
  // Concatenates every rank's `local` along dim 0 in rank order (ranks may
  // hold different row counts; the other dimensions and the dtype must match).
  torch::Tensor gather_rows(const torch::Tensor& local, const char* what);

  struct Impl;

 private:
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

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
  // Before loss.backward(): whether this backward ends an accumulation window.
  void arm(bool sync);
  // After backward (the reduce_gradients hook).
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

// Parameters and buffers of every rank set to rank 0's (DDP's start).
void broadcast_from_rank0(ProcessGroup& group, const std::vector<torch::Tensor>& tensors);

}  // namespace trainhook::distributed
