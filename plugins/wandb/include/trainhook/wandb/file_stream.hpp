// The file_stream half of the protocol: the request body (pure) and
// FileStreamer, which holds what is not yet acknowledged and sends it one
// request at a time.
//
// Memory bound (StreamOptions::memory_lines > 0, the training run's uploader):
// at most that many unacknowledged lines stay in memory; beyond it the oldest
// spill to a support::Spool file (spill_file) and are sent from there first,
// so the server still receives every line once, in order, at its offset; a
// request then carries at most memory_lines lines. 0 keeps everything in
// memory (wandb-sync, whose lines are already on disk).
//
// POST <base>/files/<entity>/<project>/<run>/file_stream
//   {"files": {"wandb-history.jsonl": {"offset": N, "content": [lines...]},
//              "wandb-summary.json": {"offset": 0, "content": [summary]}},
//    "complete": true, "exitcode": 0}
// `offset` is the line number of the first line: the server stores lines at
// absolute positions, so sending the same body again changes nothing. That is
// what makes retries (and a later wandb-sync) safe: nothing is lost, nothing
// duplicated. complete/exitcode go only in a request that carries every
// remaining line.
#pragma once

#include <trainhook/support/http_client.hpp>
#include <trainhook/support/request_thread.hpp>
#include <trainhook/support/retry.hpp>

#include <trainhook/support/spool.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::wandb {

constexpr const char* kHistoryFile = "wandb-history.jsonl";
constexpr const char* kSummaryFile = "wandb-summary.json";

struct StreamTarget {
  std::string base_url;
  std::string entity;
  std::string project;
  std::string run_id;
  std::string url() const;  // <base>/files/<entity>/<project>/<run>/file_stream, parts URL-encoded
};

// lines[first, first+count) at history_offset; summary (if any) at summary_offset.
std::string file_stream_body(int64_t history_offset, const std::deque<std::string>& lines, size_t count,
                             const std::string* summary, int64_t summary_offset, std::optional<int> exitcode);

// W&B's rules: 400, 401, 403, 404, 409, 410, 413, 422 and 501 are final; every
// other failure (transport errors, 429, 5xx, other answers) is retried.
support::RetryClassification wandb_retry_classification();
support::RetryDecision classify(const support::HttpResponse& response);

// True when the reply asks the run to stop ({"stopped": true}).
bool reply_says_stopped(const std::string& body);

enum class SendStatus { nothing_to_send, delivered, retry, fatal };

struct SendResult {
  SendStatus status = SendStatus::nothing_to_send;
  std::chrono::milliseconds retry_in{0};  // for retry: backoff or Retry-After
  std::string message;                    // for retry/fatal: what the server or transport said
  size_t lines = 0;                       // history lines acknowledged by this request
  bool stopped = false;                   // the server asked the run to stop
};

struct StreamOptions {
  size_t max_request_bytes = 10u << 20;
  size_t memory_lines = 0;           // 0: unbounded (see above)
  std::filesystem::path spill_file;  // needed when memory_lines > 0
  support::RetryPolicy policy = support::RetryPolicy()
                                    .initial_delay(std::chrono::seconds(2))
                                    .max_delay(std::chrono::seconds(60))
                                    .jitter(0.25);
};

// Not thread-safe: lives on one worker thread (or the wandb-sync command).
class FileStreamer {
 public:
  // Removes a spill file left at options.spill_file (its lines belonged to
  // another process's offsets). Throws std::runtime_error naming the file.
  FileStreamer(StreamTarget target, int64_t history_offset, StreamOptions options);
  ~FileStreamer();
  FileStreamer(const FileStreamer&) = delete;
  FileStreamer& operator=(const FileStreamer&) = delete;

  // May spill to disk (memory bound); throws std::runtime_error naming the file.
  void add_line(std::string line);
  void set_summary(std::string line) {
    summary_ = std::move(line);
    summary_dirty_ = true;
    ++summary_version_;
  }
  void set_complete(int exitcode) {
    complete_ = exitcode;
    complete_acked_ = false;
  }

  bool has_work() const noexcept {
    return pending_lines() > 0 || summary_dirty_ || (complete_ && !complete_acked_);
  }
  // One request with as much as fits (at least one line); no sleeping here.
  // A failed request's lines go first in the next one (the same offset).
  // while_waiting (optional): the request then runs on a thread of its own
  // and this is called every few milliseconds until it ends, on the calling
  // thread; it may call add_line and set_summary (the uploader takes in the
  // records queued meanwhile), nothing else of this streamer.
  SendResult send_once(support::HttpClient& http, const std::function<void()>& while_waiting = {});

  int64_t acked_offset() const noexcept { return offset_; }  // first line not acknowledged
  // Unacknowledged lines: on disk (spilled) plus in memory.
  uint64_t pending_lines() const noexcept { return inflight_.size() + spilled() + pending_.size(); }
  // A full request's worth is waiting (memory bound): the caller should not
  // wait for its coalescing interval, or a fast run would fall behind for good.
  bool backlog_full() const noexcept {
    return options_.memory_lines > 0 && pending_lines() >= options_.memory_lines;
  }
  uint64_t spilled() const noexcept { return spill_ ? spill_->pending() : 0; }
  size_t in_memory() const noexcept { return inflight_.size() + pending_.size(); }
  // Hands every unacknowledged line to `sink` in order, in chunks of at most
  // memory_lines (when bounded), and forgets them (the run goes offline).
  void take_pending(const std::function<void(const std::vector<std::string>&)>& sink);
  const std::optional<std::string>& summary() const noexcept { return summary_; }
  bool summary_dirty() const noexcept { return summary_dirty_; }
  std::optional<int> complete() const noexcept { return complete_; }
  bool complete_acked() const noexcept { return complete_acked_; }
  const StreamTarget& target() const noexcept { return target_; }

 private:
  void remove_spill_files() const;
  void fill_request();  // moves the next request's lines into inflight_

  StreamTarget target_;
  StreamOptions options_;
  support::Backoff backoff_;
  int64_t offset_;
  std::deque<std::string> inflight_;                // the oldest lines: the request sent (or to resend)
  std::deque<std::string> pending_;                 // newer than every spilled line
  std::unique_ptr<support::RequestThread> runner_;  // for while_waiting, started at first use
  std::unique_ptr<support::Spool> spill_;           // older lines, when memory_lines is exceeded
  std::optional<std::string> summary_;
  bool summary_dirty_ = false;
  uint64_t summary_version_ = 0;  // a summary set during a request stays dirty
  std::optional<int> complete_;
  bool complete_acked_ = false;
};

}  // namespace trainhook::wandb
