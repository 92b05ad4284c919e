// A multi-producer, single-consumer queue with a capacity, for handing records
// from the training thread to a writer thread at the lowest cost to the
// producer:
//  - try_push() never waits: when the queue is full it refuses and the caller
//    counts the drop;
//  - a producer wakes the consumer only when the queue reaches its high-water
//    mark (half the capacity) or on close(); otherwise the consumer comes by on
//    its own timer (pop_all's timeout). So a step's on_log is a lock and a move,
//    never a system call, and the writer wakes a few times per second instead
//    of once per record.
//
// (plugins/support's Worker notifies on every enqueue, which costs a thread
// wake-up and a write per record at one log per step; hence this queue.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

namespace trainhook::tensorboard {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity)
      : capacity_(capacity == 0 ? 1 : capacity), high_water_(capacity_ / 2 == 0 ? 1 : capacity_ / 2) {}

  size_t capacity() const noexcept { return capacity_; }

  // Queues item unless the queue is full or closed; never waits.
  bool try_push(T&& item) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || items_.size() >= capacity_) return false;
      items_.push_back(std::move(item));
      wake = items_.size() == high_water_ && consumer_waiting_;
    }
    if (wake) cv_.notify_one();
    return true;
  }

  // Moves every queued item to the end of `out` once the timeout passed, the
  // high-water mark was reached or the queue was closed (an empty queue just
  // waits for the next of those). Returns false once closed and drained.
  bool pop_all(std::vector<T>& out, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!closed_ && items_.size() < high_water_) {
      consumer_waiting_ = true;
      cv_.wait_for(lock, timeout, [&] { return closed_ || items_.size() >= high_water_; });
      consumer_waiting_ = false;
    }
    if (items_.empty()) return !closed_;
    if (out.empty()) {
      out.swap(items_);  // the consumer's emptied buffer becomes the new queue storage
    } else {
      for (auto& item : items_) out.push_back(std::move(item));
      items_.clear();
    }
    return true;
  }

  // Producers are refused from now on; the consumer is woken to drain what is left.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  const size_t capacity_;
  const size_t high_water_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> items_;
  bool closed_ = false;
  bool consumer_waiting_ = false;
};

}  // namespace trainhook::tensorboard
