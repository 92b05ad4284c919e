// The mlflow worker's side: sets up the run (experiment get-or-create, run
// create or resume, params), then delivers records in order. Runs only on the
// worker thread (support::Worker); the owner touches it again only after the
// worker stopped.
//
// Memory flat in the run's length: requests run on a
// support::RequestThread; while one is in flight the worker thread takes what
// the training thread queued (take_queued_from) into memory, and beyond
// MlflowOptions::memory_records (500) the oldest spill to a spool file
// (<spool_dir>/<run_id>.jsonl). So neither the worker's queue nor memory grows
// when the server is slower than training; the spool on disk does.
//
// Nothing lost, in order: the spool is always delivered before newer records;
// a failed request's records go back in front (of the spool too, with
// Spool::prepend, when newer ones were spilled meanwhile), so the server
// receives everything in step order.
//
// No duplicates: every metric carries the timestamp fixed at enqueue time, and
// after any failure that may have reached the server (timeout, dropped
// connection, 5xx) or when replaying a spool left by an earlier process, the
// next batch is first compared with the server's metric history
// (metrics/get-history) and points the server already has are not resent.
#pragma once

#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/mlflow/record.hpp>
#include <trainhook/mlflow/rest.hpp>
#include <trainhook/support/http_client.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/request_thread.hpp>
#include <trainhook/support/retry.hpp>
#include <trainhook/support/spool.hpp>
#include <trainhook/support/worker.hpp>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::mlflow {

// Everything the run setup needs, decided on the training thread.
struct RunPlan {
  std::string run_name;
  std::map<std::string, std::string> tags;  // system tags + MLFLOW_TAGS (+ parent)
  std::vector<std::pair<std::string, std::string>> params;
  // The run's start_time: train begin on the training thread, not the moment
  // the worker reaches the server (a short run may end before that).
  int64_t start_time_ms = 0;
};

class Sender {
 public:
  // log: thread-safe logging to the host (called on the worker thread).
  Sender(MlflowOptions config, RunPlan plan, std::string spool_dir, support::Logger log);
  ~Sender();

  // Where the records queued while a request is in flight come from (the
  // worker's take_queued); set before the first enqueue. Unset: nothing is
  // taken early (the worker hands them over at the next call).
  void take_queued_from(std::function<std::vector<Record>()> take_queued) {
    take_queued_ = std::move(take_queued);
  }

  // The support::Worker handler.
  support::BatchResult handle(std::vector<Record>& batch, support::WorkerContext& ctx);

  // After the worker stopped: moves every record still held (plus `rest`, the
  // ones the worker never handed over) to the spool. Returns how many.
  uint64_t spill_everything(std::vector<Record> rest);

  // Valid once set up (worker thread) or after the worker stopped.
  const std::string& run_id() const noexcept { return run_id_; }
  bool run_ready() const noexcept { return run_ready_; }
  uint64_t spooled() const noexcept;  // records waiting in the spool file
  std::string spool_path() const;
  // The last reason a request did not succeed (HTTP error, no answer, an
  // answer that is not MLflow's JSON); empty when none failed. With no run
  // created it says why.
  const std::string& last_problem() const noexcept { return last_problem_; }

 private:
  enum class Outcome { ok, retry, fail };
  Outcome setup(support::WorkerContext& ctx);
  Outcome resolve_experiment(std::string& experiment_id);
  Outcome log_params_and_tags(const nlohmann::json& existing_params, bool resumed);
  Outcome deliver(std::vector<Record>& records, uint64_t& delivered, uint64_t& failed);
  Outcome send_metrics(std::vector<Record>& metrics);
  Outcome upload_dir(const Record& r);
  Outcome end_run(const Record& r);
  Outcome classify(const RestResult& r, const std::string& what);
  Outcome malformed(const RestResult& r, const std::string& what);
  bool drop_already_stored(std::vector<Record>& metrics);
  void open_run_spool();
  void spill_over_limit();
  void absorb_queued();  // during a request: take the worker's queue in, spill beyond the bound
  void put_back(std::vector<Record>& group);
  void log(LogLevel level, const std::string& message) const { support::log_to(log_, level, message); }
  size_t take_group(std::deque<Record>& from, std::vector<Record>& group) const;

  MlflowOptions config_;
  RunPlan plan_;
  std::string spool_dir_;
  support::Logger log_;
  std::function<std::vector<Record>()> take_queued_;
  bool warned_spill_ = false;
  int64_t started_ms_;  // end_run records older than this come from an earlier process
  std::unique_ptr<support::HttpClient> http_;
  std::unique_ptr<support::RequestThread> requests_;
  std::unique_ptr<MlflowRest> rest_;
  support::RetryClassification classification_;
  support::Backoff backoff_;
  std::chrono::steady_clock::time_point next_attempt_{};
  bool run_ready_ = false;
  bool setup_failed_ = false;
  bool suspect_ = false;  // the last failure may have stored data: check before resending
  std::string run_id_;
  std::string last_problem_;
  std::optional<std::string> artifact_path_;
  bool warned_artifacts_ = false;
  std::deque<Record> pending_;
  std::unique_ptr<support::Spool> spool_;
};

}  // namespace trainhook::mlflow
