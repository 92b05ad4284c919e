// The background uploader: one worker thread runs one job at a time; the
// training thread only enqueues. While a job runs, at most ONE job per group
// waits: a newer job of the same group replaces the waiting one (its checkpoint
// is then "superseded", logged and reported), so uploads that fall behind
// training always catch up with the newest checkpoint instead of piling up.
//
// Ownership: the queue owns its jobs and its thread; the destructor cancels
// what is left and joins.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/support/log.hpp>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trainhook::flyte {

struct UploadJob {
  std::string name;   // what it uploads, for logs and the report ("checkpoint-20")
  std::string group;  // jobs of one group supersede each other while waiting
  // Does the work on the worker thread; throws on failure. Must return soon
  // after the Cancellation is set.
  std::function<void(const Cancellation&)> run;
  // Called exactly once when the job is finished, superseded or dropped
  // (e.g. removes its staging folder). May be empty.
  std::function<void()> cleanup;
};

struct UploadOutcome {
  enum class Status { uploaded, failed, superseded, not_started, in_progress };
  std::string name;
  Status status;
  std::string detail;  // failure reason / superseding job
};

const char* to_string(UploadOutcome::Status s) noexcept;

class UploadQueue {
 public:
  explicit UploadQueue(support::Logger log);
  ~UploadQueue();
  UploadQueue(const UploadQueue&) = delete;
  UploadQueue& operator=(const UploadQueue&) = delete;

  // Never waits for I/O. Starts the worker thread on first use. Returns the
  // job's index in outcomes().
  size_t enqueue(UploadJob job);
  // Waits until nothing runs or waits; true when that happened within timeout.
  bool wait_idle(std::chrono::milliseconds timeout);
  // Stops: the running job is cancelled, waiting ones become not_started.
  void shutdown();
  // Set by shutdown(); jobs and their stores watch it.
  const Cancellation& cancellation() const noexcept { return cancel_; }
  // One entry per enqueued job, in enqueue order.
  std::vector<UploadOutcome> outcomes() const;

 private:
  struct Entry {
    UploadJob job;
    size_t outcome = 0;  // index into outcomes_
  };
  void worker();
  void finish(Entry& e, UploadOutcome::Status s, const std::string& detail);

  support::Logger log_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> waiting_;
  bool running_ = false;
  bool stopping_ = false;
  std::vector<UploadOutcome> outcomes_;
  Cancellation cancel_;
  std::thread thread_;
};

}  // namespace trainhook::flyte
