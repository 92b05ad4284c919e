// A background worker with a bounded queue: the training thread only enqueues
// (never blocks on I/O, never waits for the network); one worker thread hands
// the queued items to a handler in batches.
//
// Coalescing: while the handler is busy (e.g. an HTTP request in flight), new
// items accumulate; the next call receives all of them (up to max_batch).
//
// Backlog: a handler that could not finish (server down) keeps the items it
// was given in its own state and returns BatchResult::again_in(d); the worker
// calls it again after d even when nothing new arrives, or earlier when a full
// batch is waiting. flush() waits until the queue is empty and the handler
// reports no backlog.
//
// Ownership: the worker owns the queue and its thread; the handler and whatever
// it captures must outlive the worker. After stop() returns, the worker thread
// has ended, so the owner may touch the handler's state again.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace trainhook::support {

struct WorkerOptions {
  size_t capacity = 100000;  // items queued at most; enqueue() refuses beyond
  size_t max_batch = 1000;   // items per handler call at most
};

struct BatchResult {
  uint64_t delivered = 0;  // items the handler delivered in this call (its own backlog included)
  uint64_t failed = 0;     // items it gave up on (reported by the handler)
  // >= 0: the handler still holds undelivered items; call it again after this long.
  std::chrono::milliseconds backlog_retry{-1};

  static BatchResult again_in(std::chrono::milliseconds d, uint64_t delivered = 0, uint64_t failed = 0) {
    return BatchResult{delivered, failed, d};
  }
  bool has_backlog() const noexcept { return backlog_retry.count() >= 0; }
};

struct WorkerStats {
  uint64_t enqueued = 0;
  uint64_t delivered = 0;
  uint64_t failed = 0;
  uint64_t dropped = 0;  // refused by enqueue() because the queue was full
  uint64_t queued = 0;   // waiting in the queue now
  bool backlog = false;  // the handler holds undelivered items
};

// Given to the handler: interruptible waits and the stop flag (also usable as
// HttpClientOptions::abort_flag, so a request in flight stops on stop()).
class WorkerContext {
 public:
  bool stopping() const noexcept { return stop_.load(); }
  const std::atomic<bool>* abort_flag() const noexcept { return &stop_; }
  // Sleeps up to d; returns false at once when the worker is being stopped.
  bool sleep_for(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return !cv_.wait_for(lock, d, [&] { return stop_.load(); });
  }
  void request_stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

template <class T>
class Worker {
 public:
  using Handler = std::function<BatchResult(std::vector<T>& batch, WorkerContext& ctx)>;

  // Starts the thread. The handler runs only on that thread.
  explicit Worker(Handler handler, WorkerOptions options = {})
      : handler_(std::move(handler)), options_(options) {
    options_.max_batch = std::max<size_t>(1, options_.max_batch);
    thread_ = std::thread([this] { run(); });
  }
  ~Worker() { stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Never blocks on I/O. False (and counted as dropped) when the queue is full
  // or the worker is stopped.
  bool enqueue(T item) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_ || queue_.size() >= options_.capacity) {
        ++stats_.dropped;
        return false;
      }
      queue_.push_back(std::move(item));
      ++stats_.enqueued;
    }
    wake_.notify_one();
    return true;
  }

  // Waits until everything enqueued so far was handled and the handler holds
  // no backlog, or the timeout passed. True when drained.
  bool flush(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return idle_.wait_for(lock, timeout, [&] { return drained_locked(); });
  }

  // Stops the thread: interrupts the handler's waits and requests, joins, and
  // returns the items that never reached the handler (in order). Idempotent.
  std::vector<T> stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopped_ = true;
    }
    ctx_.request_stop();
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<T> rest(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    return rest;
  }

  WorkerStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    WorkerStats s = stats_;
    s.queued = queue_.size();
    s.backlog = backlog_;
    return s;
  }

 private:
  bool drained_locked() const { return queue_.empty() && !busy_ && !backlog_; }

  void run() {
    using clock = std::chrono::steady_clock;
    clock::time_point next_call{};
    for (;;) {
      std::vector<T> batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [&] {
          if (stopped_) return true;
          if (!backlog_) return !queue_.empty();
          return clock::now() >= next_call || queue_.size() >= options_.max_batch;
        };
        if (backlog_) {
          wake_.wait_until(lock, next_call, ready);
        } else {
          wake_.wait(lock, ready);
        }
        if (stopped_) break;
        if (!ready()) continue;
        size_t n = std::min(queue_.size(), options_.max_batch);
        batch.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          batch.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        busy_ = true;
      }
      BatchResult r;
      try {
        r = handler_(batch, ctx_);
      } catch (...) {
        // A handler must not throw; if it does, its batch counts as failed.
        r = BatchResult{0, batch.size(), std::chrono::milliseconds(-1)};
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        busy_ = false;
        backlog_ = r.has_backlog();
        stats_.delivered += r.delivered;
        stats_.failed += r.failed;
        if (backlog_) next_call = clock::now() + r.backlog_retry;
      }
      idle_.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
    }
    idle_.notify_all();
  }

  Handler handler_;
  WorkerOptions options_;
  WorkerContext ctx_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<T> queue_;
  WorkerStats stats_;
  bool busy_ = false;
  bool backlog_ = false;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace trainhook::support
