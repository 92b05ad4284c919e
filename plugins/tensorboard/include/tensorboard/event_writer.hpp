// The background event-file writer: the training thread hands it copies of
// logged values (never blocking: a full queue drops the record and counts it);
// one worker thread (support::Worker) encodes them as Events and appends them
// to the file.
//
// Flushing: the worker writes each batch it takes from the queue with one
// write(2) as soon as it has encoded it, so records reach the OS (and a live
// TensorBoard) within one batch — far below the 2 s HF's writer allows — and a
// crash of the process loses only what was still queued. The file is fsync'ed
// when the writer finishes.
//
// Ownership: the writer owns its worker and file; finish() (or the destructor)
// stops the worker, writes what was still queued and closes the file.
#pragma once

#include <tensorboard/record_writer.hpp>

#include <trainhook/support/worker.hpp>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
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
  void add_scalar(std::string_view key, double value);
  void add_text(std::string_view key, std::string_view text);

  double wall_time() const noexcept { return wall_time_; }
  int64_t step() const noexcept { return step_; }
  size_t scalar_count() const noexcept { return values_.size(); }
  size_t text_count() const noexcept { return text_key_ends_.size(); }
  std::string_view scalar_key(size_t i) const noexcept { return slice(keys_, scalar_key_ends_, i); }
  double scalar_value(size_t i) const noexcept { return values_[i]; }
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
  std::string keys_;
  std::vector<uint32_t> scalar_key_ends_;
  std::vector<double> values_;
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

class EventWriter {
 public:
  // Called from the worker thread (e.g. to log a write error as it happens).
  using Warn = std::function<void(const std::string&)>;
  // Given the sorted scalar tags written, returns Event payloads to append last.
  using FinalEvents = std::function<std::vector<std::string>(const std::vector<std::string>& scalar_tags)>;

  // Creates `file` (its folder must exist), writes the file_version record and
  // starts the worker. queue_capacity: items (log records and ready events)
  // waiting at most. Throws std::runtime_error naming the file on failure.
  EventWriter(std::filesystem::path file, size_t queue_capacity, Warn warn);
  ~EventWriter();
  EventWriter(const EventWriter&) = delete;
  EventWriter& operator=(const EventWriter&) = delete;

  // Training thread, never blocks. Values are written as scalars and texts
  // under rewrite_log_key() tags. False when the queue was full (counted).
  bool log(LogRecord&& record);
  // Queues a ready Event payload (texts, hparams). False when the queue was full (counted).
  bool write_event(std::string event_payload);

  // Drains the queue, stops the worker, appends final_events(...) and closes
  // the file. Later calls return the same stats.
  WriterStats finish(const FinalEvents& final_events = {});

  const std::filesystem::path& file() const noexcept { return file_.path(); }

 private:
  using Item = std::variant<LogRecord, std::string>;
  // Encodes and writes a batch; runs on the worker thread, and on the caller's
  // thread in finish() for what the stopped worker had not taken yet.
  void write_batch(const std::vector<Item>& batch);
  void encode(const Item& item);
  bool append(const std::string& records, uint64_t record_count);

  EventFile file_;
  Warn warn_;
  bool finished_ = false;
  // Owned by whichever thread runs write_batch (the worker until it is stopped).
  WriterStats stats_;
  std::string event_;  // reused encoding buffers
  std::string records_;
  std::unordered_set<std::string> seen_tags_;
  std::vector<std::string> scalar_tags_;  // in first-seen order
  std::atomic<uint64_t> dropped_records_{0};
  std::atomic<uint64_t> dropped_scalars_{0};
  // Declared last: destroyed (stopped) first, while the state above is alive.
  std::unique_ptr<support::Worker<Item>> worker_;
};

}  // namespace trainhook::tensorboard
