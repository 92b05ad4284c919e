// A background worker with a bounded queue: the training thread only enqueues
// (never blocks on I/O, never waits for the network); one worker thread hands
// the queued items to a handler in batches.
//
// Coalescing: while the handler is busy (e.g. an HTTP request in flight), new
// items accumulate; the next call receives all of them (up to max_batch).
//
// Wake-ups: by default every enqueue wakes an idle thread (lowest latency). With
// WorkerOptions::wake_at > 0 (opt-in) an enqueue wakes it only when the queue
// reaches wake_at items (or max_batch during a backlog); otherwise the thread
// comes by on its own every wake_interval and takes what is queued. For
// producers that enqueue many small items per training step (event writers)
// this makes an enqueue a lock and a move instead of a thread wake-up per
// item. flush() and stop() still wake the thread at once. While the handler
// holds a backlog, an enqueue wakes the thread only when it completes a batch
// (the thread comes back at the handler's retry time anyway).
//
// The thread is named WorkerOptions::thread_name (top, perf and gdb show it).
//
// Backlog: a handler that could not finish (server down) keeps the items it
// was given in its own state and returns BatchResult::again_in(d); the worker
// calls it again after d even when nothing new arrives, or earlier when a full
// batch is waiting or a flush() is waiting for queued items. flush() waits
// until the queue is empty and the handler reports no backlog.
//
// Superseding (opt-in, a Supersede given to the constructor): while the
// handler is busy, an enqueued item may replace a waiting one it supersedes
// (e.g. a newer checkpoint of the same group); the replaced item goes back to
// the caller of enqueue(), who reports it. An item waiting for an idle thread
// that has not woken up yet is not behind, so it is never replaced.
//
// Ownership: the worker owns the queue and its thread; the handler and whatever
// it captures must outlive the worker. After stop() returns, the worker thread
// has ended, so the owner may touch the handler's state again.
#pragma once

#include <trainhook/support/thread_name.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace trainhook::support {

struct WorkerOptions {
  size_t capacity = 100000;  // items queued at most; enqueue() refuses beyond
  size_t max_batch = 1000;   // items per handler call at most
  // 0: wake the thread at every enqueue. > 0: wake it at this many queued
  // items, else after at most wake_interval (see above). E.g. capacity / 2.
  size_t wake_at = 0;
  std::chrono::milliseconds wake_interval{200};  // used when wake_at > 0; must be > 0
  std::string thread_name = "th-worker";         // at most 15 bytes are kept (Linux's limit)
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
  uint64_t dropped = 0;     // refused by enqueue() because the queue was full
  uint64_t superseded = 0;  // replaced while waiting by a newer item (Supersede)
  uint64_t queued = 0;      // waiting in the queue now
  bool backlog = false;     // the handler holds undelivered items
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
    std::vector<std::function<void()>> hooks;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      hooks.swap(on_stop_);
    }
    cv_.notify_all();
    for (auto& h : hooks) h();
  }
  // Runs f when the stop flag goes up (at once when it is up already), for
  // I/O that watches a stop flag of its own: e.g. a store made before the
  // worker existed. f runs on the thread that stops the worker and must not throw.
  void on_stop(std::function<void()> f) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stop_) {
        on_stop_.push_back(std::move(f));
        return;
      }
    }
    f();
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> on_stop_;
};

template <class T>
class Worker {
 public:
  using Handler = std::function<BatchResult(std::vector<T>& batch, WorkerContext& ctx)>;
  // True when `newer` replaces `waiting` (see Superseding above). Runs under
  // the queue's lock on the enqueuing thread: keep it short; it may note what
  // replaced it in `waiting`, which enqueue() then hands back.
  using Supersede = std::function<bool(const T& newer, T& waiting)>;

  // Starts the thread. The handler runs only on that thread.
  explicit Worker(Handler handler, WorkerOptions options = {}, Supersede supersede = {})
      : handler_(std::move(handler)), options_(options), supersede_(std::move(supersede)) {
    options_.max_batch = std::max<size_t>(1, options_.max_batch);
    if (options_.wake_at > 0 && options_.wake_interval.count() <= 0)
      throw std::invalid_argument("WorkerOptions::wake_interval must be > 0 when wake_at is set");
    thread_ = std::thread([this] { run(); });
  }
  ~Worker() { stop(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Never blocks on I/O. False (and counted as dropped) when the queue is full
  // or the worker is stopped. With a Supersede and `replaced` given, a waiting
  // item that `item` supersedes is moved into *replaced for the caller to report.
  bool enqueue(T item, std::optional<T>* replaced = nullptr) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) {
        ++stats_.dropped;
        return false;
      }
      if (supersede_ && busy_ && replaced != nullptr) {
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
          if (!supersede_(item, *it)) continue;
          replaced->emplace(std::move(*it));
          queue_.erase(it);
          ++stats_.superseded;
          break;
        }
      }
      if (!push_locked(item, wake)) return false;
    }
    if (wake) wake_.notify_one();
    return true;
  }

  // Queues `items` in order under one lock, with at most one wake-up: the
  // records of one event (a log's metrics) cost the caller one lock, not one
  // each. No superseding. Moves from the items it queues; the rest (queue
  // full, or stopped) are counted as dropped. Returns how many were queued.
  size_t enqueue_all(std::vector<T>& items) {
    size_t queued = 0;
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) {
        stats_.dropped += items.size();
        return 0;
      }
      for (T& item : items) queued += push_locked(item, wake) ? 1 : 0;
    }
    if (wake) wake_.notify_one();
    return queued;
  }

  // Waits until everything enqueued so far was handled and the handler holds
  // no backlog, or the timeout passed. True when drained.
  bool flush(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    ++flushing_;  // with wake_at: the thread takes what is queued now, not at its timer
    wake_.notify_one();
    const bool drained = idle_.wait_for(lock, timeout, [&] { return drained_locked(); });
    --flushing_;
    return drained;
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

  // For the handler, on the worker thread, while it waits on slow I/O: takes
  // up to max items that would have formed its next batch (in order), so the
  // queue does not grow with the length of one request (the wandb uploader
  // renders them into its bounded line buffer meanwhile).
  std::vector<T> take_queued(size_t max) {
    std::vector<T> out;
    std::lock_guard<std::mutex> lock(mu_);
    const size_t n = std::min(max, queue_.size());
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      out.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    return out;
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

  // Appends one item, or counts it as dropped when the queue is full. `wake`
  // becomes true when this item lets the thread act (a mark it crosses).
  bool push_locked(T& item, bool& wake) {
    if (queue_.size() >= options_.capacity) {
      ++stats_.dropped;
      return false;
    }
    queue_.push_back(std::move(item));
    ++stats_.enqueued;
    wake = wakes_thread_locked() || wake;
    return true;
  }

  // Whether the item just queued can end the thread's wait, so that an
  // enqueue wakes the thread only then: a wake-up it would sleep through
  // again still costs the training thread a futex call and, as the scheduler
  // tends to run the woken thread on the waker's core, a preemption. The
  // thread re-checks its predicates before every wait, so a notify that
  // finds it busy in the handler loses nothing.
  bool wakes_thread_locked() const {
    if (flushing_ > 0) return true;  // a flush hands over what is queued at once
    const size_t n = queue_.size();
    // A backlog waits for its retry time (a timed wait), or for a full batch.
    if (backlog_) return n == options_.max_batch;
    // Opt-in batched wake-ups: only when a threshold is crossed (the
    // thread's wait predicates see any later size, so one notify suffices).
    if (options_.wake_at > 0) return n == options_.wake_at || n == options_.max_batch;
    return true;
  }

  void run() {
    name_this_thread(options_.thread_name);
    using clock = std::chrono::steady_clock;
    clock::time_point next_call{};
    for (;;) {
      std::vector<T> batch;
      {
        std::unique_lock<std::mutex> lock(mu_);
        auto ready = [&] {
          if (stopped_) return true;
          if (!backlog_) return !queue_.empty();
          // A flush hands over what is queued at once, backlog or not: the
          // owner is finishing (e.g. a run's end mark) and must not wait out
          // the handler's retry or coalescing delay for it.
          return clock::now() >= next_call || queue_.size() >= options_.max_batch ||
                 (flushing_ > 0 && !queue_.empty());
        };
        if (backlog_) {
          wake_.wait_until(lock, next_call, ready);
        } else if (options_.wake_at == 0) {
          wake_.wait(lock, ready);
        } else {
          // Batched wake-ups: the mark, a flush, or the timer (then whatever is queued).
          wake_.wait_for(lock, options_.wake_interval, [&] {
            return stopped_ || queue_.size() >= options_.wake_at || (flushing_ > 0 && !queue_.empty());
          });
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
  Supersede supersede_;
  WorkerContext ctx_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<T> queue_;
  WorkerStats stats_;
  bool busy_ = false;
  bool backlog_ = false;
  int flushing_ = 0;  // callers waiting in flush()
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace trainhook::support
