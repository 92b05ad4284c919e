// A multi-producer, single-consumer queue with a capacity, for handing records
// from the training thread to a writer thread without ever blocking the
// producer: try_push() refuses when full instead of waiting, and the caller
// counts what it dropped. The consumer takes everything queued at once
// (pop_all), so a busy producer and consumer meet on the lock once per batch.
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
  explicit BoundedQueue(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  size_t capacity() const noexcept { return capacity_; }

  // Queues item unless the queue is full or closed; never waits.
  bool try_push(T&& item) { return push_impl(std::move(item), true); }
  // Queues item even beyond the capacity (for rare control records that must
  // not be lost); false only when closed.
  bool push(T&& item) { return push_impl(std::move(item), false); }

  // Moves every queued item to the end of `out`, waiting up to `timeout` for
  // the first one. Returns false once the queue is closed and empty.
  bool pop_all(std::vector<T>& out, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    if (items_.empty() && !closed_) {
      consumer_waiting_ = true;
      cv_.wait_for(lock, timeout, [&] { return !items_.empty() || closed_; });
      consumer_waiting_ = false;
    }
    if (items_.empty()) return !closed_;
    if (out.empty()) {
      out.swap(items_);
    } else {
      for (auto& item : items_) out.push_back(std::move(item));
      items_.clear();
    }
    return true;
  }

  // Producers are refused from now on; the consumer drains what is left.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closed_ = true;
    }
    cv_.notify_all();
  }

 private:
  bool push_impl(T&& item, bool bounded) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_ || (bounded && items_.size() >= capacity_)) return false;
      items_.push_back(std::move(item));
      // Only a sleeping consumer needs the (system call) notification.
      wake = consumer_waiting_;
    }
    if (wake) cv_.notify_one();
    return true;
  }

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<T> items_;
  bool closed_ = false;
  bool consumer_waiting_ = false;
};

}  // namespace trainhook::tensorboard
