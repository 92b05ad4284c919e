// The all-reduce of ranks that share one machine, through one POSIX
// shared-memory segment instead of Gloo's TCP sockets: each rank copies its
// chunk into its slot, sums its share of the chunk over every rank's slot (in
// rank order), and copies the whole result back. Two arrival counters per rank
// and futex waits order the phases; no thread of Gloo, no system call on the
// data path. ProcessGroup (process_group.cpp) sets it up at the rendezvous when
// every rank is on this machine and routes CPU all-reduces through it.
//
// For two ranks the values are those of Gloo's ring (a + b is commutative);
// with more, every element is summed in rank order.
//
// A peer that exits is noticed within ~100 ms (its pid, when the ranks share a
// pid namespace); one that stops answering, after `timeout`. Either throws
// std::runtime_error naming the rank; the segment is unusable after.
#pragma once

#include <torch/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace trainhook::distributed {

class SharedMemoryAllReduce {
 public:
  enum class Op { sum, max };

  // Rank 0: creates segment `name` (shm_open's, starting with '/') for `world`
  // ranks with slots of `slot_bytes`. Others: attaches to it. Returns nullptr
  // and the reason in `why` when the segment cannot be made or opened (no
  // /dev/shm, too small, another machine).
  static std::unique_ptr<SharedMemoryAllReduce> create(const std::string& name, int world, size_t slot_bytes,
                                                       std::string& why);
  static std::unique_ptr<SharedMemoryAllReduce> attach(const std::string& name, int rank, int world,
                                                       std::string& why);
  ~SharedMemoryAllReduce();
  SharedMemoryAllReduce(const SharedMemoryAllReduce&) = delete;
  SharedMemoryAllReduce& operator=(const SharedMemoryAllReduce&) = delete;

  // Removes the name once every rank has attached (the mapping lives on).
  void unlink() noexcept;
  // Element-wise over all ranks, in place; `t` contiguous on the CPU. Every rank
  // calls it with the same sizes and dtype, in the same order.
  void all_reduce(const torch::Tensor& t, Op op, std::chrono::milliseconds timeout);
  // From another thread: an all-reduce waiting for a peer gives up within
  // ~100 ms (a group being destroyed must not wait out the timeout).
  void abort() noexcept { aborted_.store(true); }

  struct Layout;

 private:
  SharedMemoryAllReduce() = default;
  void wait_for_all(size_t phase, uint32_t seq, std::chrono::steady_clock::time_point deadline) const;
  std::string name_;
  void* base_ = nullptr;
  size_t bytes_ = 0;
  int rank_ = 0;
  int world_ = 1;
  size_t slot_bytes_ = 0;
  uint32_t seq_ = 0;
  bool broken_ = false;
  std::atomic<bool> aborted_{false};
};

}  // namespace trainhook::distributed
