// The worker side of the wandb callback: everything that touches the network
// or the disk. The training thread only enqueues Records into a
// support::Worker whose handler is RunUploader::handle; that one thread owns
// all the state below, so there is at most one request in flight.
//
// Phases: connecting (RunResumeStatus when resuming, then UpsertBucket) ->
// streaming (FileStreamer, one coalesced request per transmit interval, backoff
// with jitter and Retry-After on failures) -> done. A final (4xx) refusal or
// a server unreachable for longer than offline_after switches to offline: the
// undelivered lines and everything after go to the offline spool instead,
// for `trainhook wandb-sync`. WANDB_MODE=offline starts there.
//
// Memory: the streamer keeps at most memory_records undelivered
// lines in memory and spills older ones to disk; while a history request is
// in flight (on the streamer's request thread) this thread keeps taking the
// records queued meanwhile (UploaderHooks::take_queued) and renders them into
// lines, so neither the queue nor the buffer grows with a slow server.
//
// End of run: a drain record (on_train_end) makes everything due at once; the
// finish record (the callback's destruction) adds the end mark.
//
// WANDB_LOG_MODEL: upload records queue folders on a ModelUploader; while
// streaming, one file is PUT per handler call whenever no history request is
// due, and the end-of-run mark is sent only after the last file. Offline, the
// folders are not uploaded (reported; the files stay on disk).
#pragma once

#include <trainhook/wandb/file_stream.hpp>
#include <trainhook/wandb/graphql.hpp>
#include <trainhook/wandb/history_line.hpp>
#include <trainhook/wandb/model_upload.hpp>
#include <trainhook/wandb/offline_run.hpp>
#include <trainhook/wandb/wandb_options.hpp>

#include <trainhook/support/http_client.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/worker.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::wandb {

struct Record {
  // start: connect now; drain: training ended, send everything at once from
  // now on (no transmit interval); neither carries anything.
  enum class Kind { start, log, finish, upload, drain };
  Kind kind = Kind::log;
  LoggedValues log;     // Kind::log (made into a LogRecord on the worker)
  int exitcode = 0;     // Kind::finish
  std::string failure;  // Kind::finish: why the run failed, or ""; kept in the summary as trainhook/failure
  // Kind::upload: a folder to upload (WANDB_LOG_MODEL). Optional so that a log
  // record, made and moved on the training thread every step, carries no path.
  std::optional<ArtifactUpload> artifact;
};

// How the uploader talks back (to the host's logger, the trainer's stop).
struct UploaderHooks {
  support::Logger log;
  std::function<void(const std::string& reason)> request_stop;
  // Takes the records queued on the worker since this batch (the Worker's
  // take_queued); called during a history request so the queue stays short.
  std::function<std::vector<Record>()> take_queued;
};

class RunUploader {
 public:
  // start_time: Unix seconds of train begin (_runtime counts from it).
  RunUploader(WandbOptions settings, RunSpec spec, double start_time, UploaderHooks hooks);
  ~RunUploader();
  RunUploader(const RunUploader&) = delete;
  RunUploader& operator=(const RunUploader&) = delete;

  // The worker handler. Worker thread only.
  support::BatchResult handle(std::vector<Record>& batch, support::WorkerContext& ctx);

  // After the worker has stopped (its thread ended): takes the records that
  // never reached the handler, spools whatever was not delivered, and returns
  // why anything was not delivered ("" when everything was, or in offline mode).
  std::string finalize(std::vector<Record> leftovers);

  // For reports and tests (after the worker stopped, or from its thread).
  std::optional<std::filesystem::path> offline_dir() const;
  int64_t lines_delivered() const noexcept { return delivered_; }
  // History lines this process wrote to the offline run folder (offline_dir()).
  int64_t lines_spooled() const noexcept;

 private:
  enum class Phase { connecting, streaming, offline };

  void absorb(Record& r);
  void absorb_queued();  // during a request: logs become lines now, the rest waits in deferred_
  void build_line(const LogRecord& rec);
  support::BatchResult connect(support::WorkerContext& ctx);
  support::BatchResult stream(support::WorkerContext& ctx);
  support::BatchResult upload_step(support::WorkerContext& ctx);
  support::BatchResult still_busy(uint64_t delivered) const;  // what is left after one request
  support::BatchResult on_failure(const std::string& what, std::chrono::milliseconds retry_in);
  void go_offline(const std::string& reason);
  support::HttpClient& http(support::WorkerContext* ctx);
  void log(LogLevel level, const std::string& m) const;

  WandbOptions settings_;
  RunSpec spec_;
  double start_time_;
  UploaderHooks hooks_;
  Phase phase_ = Phase::connecting;

  std::unique_ptr<support::HttpClient> http_;
  support::Backoff connect_backoff_;
  std::optional<std::chrono::steady_clock::time_point> failing_since_;
  std::chrono::steady_clock::time_point next_send_{};
  std::chrono::steady_clock::time_point retry_not_before_{};  // the last failure's Retry-After / backoff
  bool warned_this_streak_ = false;

  std::vector<Record> deferred_;    // non-log records taken during a request, absorbed next call
  std::vector<LogRecord> unbuilt_;  // logged before the run's offsets were known
  int64_t next_step_ = 0;
  double runtime_base_ = 0;
  Summary summary_;
  bool summary_changed_ = false;
  std::optional<int> finish_;
  bool draining_ = false;  // Kind::drain or finish_: history is due at once

  std::unique_ptr<FileStreamer> streamer_;
  ModelUploader uploads_;
  std::unique_ptr<OfflineRunWriter> spool_;
  std::string offline_reason_;
  int64_t delivered_ = 0;
  bool stop_requested_ = false;
};

}  // namespace trainhook::wandb
