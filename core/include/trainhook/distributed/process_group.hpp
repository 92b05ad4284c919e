// trainhook's view of a c10d process group: the few collectives the trainer
// needs (sum/max all-reduce, broadcast from a root, barrier, gathering rows in
// rank order). All c10d calls live in core/src/distributed/process_group.cpp,
// so the API differences between LibTorch 1.13 (ProcessGroupGloo derives from
// ProcessGroup) and 2.x (from Backend) stay in one file.
//
// Every collective must be called by every rank in the same order, from one
// thread at a time (the training loop's). A failure
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
  // Rendezvous over a TCPStore at MASTER_ADDR:MASTER_PORT served by rank 0 (under torchrun:
  // its agent's store with LibTorch 2.x; with 1.13, rank 0's own on a port the kernel chose, published
  // in the agent's store), then a Gloo group over the interface
  // that routes to MASTER_ADDR (GLOO_SOCKET_IFNAME overrides). nccl adds an NCCL group for CUDA
  // tensors (a CUDA LibTorch linked whole, with GPUs); elsewhere it throws naming what is missing.
  // Throws CollectiveError when the rendezvous does not complete in `timeout`.
  static std::shared_ptr<ProcessGroup> create(const LaunchEnv& env, DdpBackend backend,
                                              std::chrono::seconds timeout);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const noexcept;
  int size() const noexcept;
  // Whether all-reduces of CPU tensors go through shared memory (every rank on
  // this machine, shared_memory_all_reduce.hpp) rather than Gloo; the other
  // collectives always go through Gloo. TRAINHOOK_DDP_SHM=0 keeps Gloo.
  bool all_reduces_in_shared_memory() const noexcept;

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

// Parameters and buffers of every rank set to rank 0's (DDP's start).
void broadcast_from_rank0(ProcessGroup& group, const std::vector<torch::Tensor>& tensors);

}  // namespace trainhook::distributed
