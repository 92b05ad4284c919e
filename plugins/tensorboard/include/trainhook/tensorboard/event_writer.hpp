// The background event-file writer: the training thread hands it copies of
// logged values (never blocking: a full queue drops the record and counts it);
// one worker thread encodes them as Events and appends them to the file.
//
// Flushing: the worker (support::Worker in its batched wake mode) takes what
// is queued every flush interval (default 1 s, at most a few seconds), or
// sooner when 256 records wait, encodes it in batches of at most 1024 and
// appends each batch with one write(2). So records reach the OS (and a live
// TensorBoard) within one interval, a crash of the process loses at most that
// interval, the queue stays short however fast the loop logs (memory flat in
// the run's length), and the training thread never makes a system call per
// record (an enqueue is a lock and a move; only the 256 mark wakes the
// thread). The file is fsync'ed when the writer finishes.
//
// Ownership: a support::DeliveryQueue owns the worker and the
// EventFileDelivery (the file); finishing stops the worker, writes what it had
// not taken yet and closes the file.
#pragma once

#include <trainhook/tensorboard/record_writer.hpp>

#include <trainhook/support/integration.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/worker.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <variant>
#include <vector>

namespace trainhook::tensorboard {

// One on_log call, copied out of the borrowed th_values: keys back to back in
// one string, so a record costs a few allocations whatever its size.
class LogRecord {
 public:
  LogRecord(double wall_time, int64_t step) noexcept : wall_time_(wall_time), step_(step) {}
  // Sizes the buffers once, so filling a record costs two allocations.
  void reserve_scalars(size_t count, size_t key_bytes) {
    scalars_.reserve(count);
    keys_.reserve(key_bytes);
  }
  void add_scalar(std::string_view key, double value);
  void add_text(std::string_view key, std::string_view text);

  double wall_time() const noexcept { return wall_time_; }
  int64_t step() const noexcept { return step_; }
  size_t scalar_count() const noexcept { return scalars_.size(); }
  size_t text_count() const noexcept { return text_key_ends_.size(); }
  std::string_view scalar_key(size_t i) const noexcept {
    const uint32_t begin = i == 0 ? 0 : scalars_[i - 1].key_end;
    return std::string_view(keys_).substr(begin, scalars_[i].key_end - begin);
  }
  double scalar_value(size_t i) const noexcept { return scalars_[i].value; }
  // All scalar keys back to back: equal for two records with the same keys.
  const std::string& scalar_keys() const noexcept { return keys_; }
  std::string_view text_key(size_t i) const noexcept { return slice(text_keys_, text_key_ends_, i); }
  std::string_view text(size_t i) const noexcept { return slice(texts_, text_ends_, i); }

 private:
  static std::string_view slice(const std::string& blob, const std::vector<uint32_t>& ends,
                                size_t i) noexcept {
    const uint32_t begin = i == 0 ? 0 : ends[i - 1];
    return std::string_view(blob).substr(begin, ends[i] - begin);
  }
  double wall_time_;
  int64_t step_;
  struct Scalar {
    uint32_t key_end;
    double value;
  };
  std::string keys_;
  std::vector<Scalar> scalars_;
  std::string text_keys_;
  std::vector<uint32_t> text_key_ends_;
  std::string texts_;
  std::vector<uint32_t> text_ends_;
};

struct WriterStats {
  std::filesystem::path file;
  uint64_t bytes = 0;
  uint64_t events_written = 0;  // records after the file_version record
  uint64_t scalars_written = 0;
  uint64_t dropped_records = 0;  // refused because the queue was full
  uint64_t dropped_scalars = 0;
  uint64_t lost_records = 0;  // not written because of a write error
  std::string error;          // the first write error, empty when none
};

// What the writer's queue holds: a log record, or a ready Event payload.
using EventItem = std::variant<LogRecord, std::string>;

// Given the sorted scalar tags written, returns Event payloads to append last.
using FinalEvents = std::function<std::vector<std::string>(const std::vector<std::string>& scalar_tags)>;

// The event file's side of the support::DeliveryQueue: encodes a batch and
// appends it with one write(2) (worker thread); at the end writes what the
// worker never took, the final events, and closes the file (training thread).
class EventFileDelivery : public support::Delivery<EventItem> {
 public:
  // Creates `file` (its folder must exist) and writes the file_version record.
  // Throws std::runtime_error naming the file on failure.
  EventFileDelivery(std::filesystem::path file, size_t queue_capacity,
                    std::chrono::milliseconds flush_interval, support::Logger log);

  support::BatchResult deliver(std::vector<EventItem>& batch, support::WorkerContext& ctx) override;
  void report(support::DeliveryResult<EventItem> result) override;
  support::WorkerOptions worker_options() const override { return worker_options_; }

  // Training thread: scalars of records the full queue refused (for WriterStats).
  void count_dropped_scalars(uint64_t n) noexcept { dropped_scalars_ += n; }
  // The events appended last (default: none).
  void set_final_events(FinalEvents final_events) { final_events_ = std::move(final_events); }
  // Complete after report().
  const WriterStats& stats() const noexcept { return stats_; }
  const std::filesystem::path& file() const noexcept { return file_.path(); }

 protected:
  // Called at the end of report() (the tensorboard callback reports to its host).
  virtual void closed(support::RunOutcome /*outcome*/) {}

 private:
  void write_batch(const std::vector<EventItem>& batch);
  void encode(const EventItem& item);
  void track_tags(const LogRecord& record);
  bool append(const std::string& records, uint64_t record_count);

  EventFile file_;
  support::Logger log_;
  support::WorkerOptions worker_options_;
  FinalEvents final_events_;
  uint64_t dropped_scalars_ = 0;  // training thread only
  // Worker-owned until it is joined.
  WriterStats stats_;
  std::string event_;  // reused encoding buffers
  std::string records_;
  std::string tag_;
  std::string last_keys_;  // scalar keys of the last record whose tags were tracked
  std::unordered_set<std::string> seen_tags_;
  std::vector<std::string> scalar_tags_;  // in first-seen order
};

// A standalone event file writer (the tests and the benchmark use it; the
// tensorboard callback holds the same EventFileDelivery through its
// support::IntegrationCallback base).
class EventWriter {
 public:
  // queue_capacity: items (log records and ready events) waiting at most. `log`
  // is called from the worker thread (a write error as it happens). Throws
  // std::runtime_error naming the file on failure.
  EventWriter(std::filesystem::path file, size_t queue_capacity, std::chrono::milliseconds flush_interval,
              support::Logger log);
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Training thread, never blocks. Values are written as scalars and texts
  // under support::split_log_key() tags (HF rewrite_logs). False when the queue was full (counted).
  bool log(LogRecord&& record);

  // Drains the queue, stops the worker, appends final_events(...) and closes
  // the file. Later calls return the same stats.
  WriterStats finish(const FinalEvents& final_events = {});

  const std::filesystem::path& file() const noexcept { return file_->file(); }

 private:
  support::DeliveryQueue<EventItem> queue_;
  EventFileDelivery* file_;  // queue_'s delivery
};

}  // namespace trainhook::tensorboard
