#include <trainhook/wandb/wandb_callback.hpp>

#include <trainhook/wandb/graphql.hpp>
#include <trainhook/wandb/history_line.hpp>
#include <trainhook/wandb/run_id.hpp>

#include <trainhook/support/clock.hpp>
#include <trainhook/support/end_of_run_summary.hpp>
#include <trainhook/support/host_name.hpp>
#include <trainhook/support/log_values.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::wandb {

namespace {

// A copy of the values only: the JSON text is made on the worker thread.
LoggedValues record_of(const trainhook::Values& v, std::optional<int64_t> global_step) {
  LoggedValues out;
  out.values = support::copy_values(v);
  out.global_step = global_step;
  out.timestamp = support::unix_seconds();
  return out;
}

}  // namespace

// How the run is delivered (RunUploader, on the worker thread) and reported.
// The drain budget (finish_timeout) is shared by train end's drain and the end
// mark, so it lives here and shrinks as it is spent.
class WandbRun final : public support::Delivery<Record> {
 public:
  WandbRun(trainhook::Host host, const WandbOptions& options, std::unique_ptr<RunUploader> uploader,
           bool auto_resume_file)
      : host_(host),
        options_(options),
        uploader_(std::move(uploader)),
        auto_resume_file_(auto_resume_file),
        drain_left_(options.finish_timeout()) {}

  support::BatchResult deliver(std::vector<Record>& batch, support::WorkerContext& ctx) override {
    return uploader_->handle(batch, ctx);
  }
  // The base's RunEnd: failed from on_exception (exit code 1, the reason in
  // the summary as trainhook/failure), killed after a signal (255).
  std::optional<Record> end_mark_with(const support::RunEnd& run_end) override {
    Record end;
    end.kind = Record::Kind::finish;
    end.exitcode = exitcode(run_end.outcome);
    if (end.exitcode != 0) end.failure = support::describe_run_end(run_end);
    return end;
  }
  support::WorkerOptions worker_options() const override {
    support::WorkerOptions wo;
    wo.thread_name = "th-wandb";
    wo.capacity = options_.queue_capacity();
    wo.max_batch = 1000;
    return wo;
  }
  std::chrono::milliseconds flush_timeout() const override { return drain_left_; }
  void spend(std::chrono::milliseconds spent) { drain_left_ -= std::min(drain_left_, spent); }

  void report(support::DeliveryResult<Record> r) override {
    const std::string problem = uploader_->finalize(std::move(r.undelivered));
    if (!problem.empty()) host_.warn("wandb: " + problem);
    const int code = exitcode(r.end.outcome);
    // The one end-of-run line (support/end_of_run_summary.hpp).
    support::EndOfRunSummary s;
    s.integration = "wandb";
    s.run = run_id_;
    s.status = support::run_status_name(r.end.outcome);
    s.failure = support::describe_run_end(r.end);
    s.unit = "history lines";
    s.delivered = static_cast<uint64_t>(uploader_->lines_delivered());
    s.spooled = static_cast<uint64_t>(uploader_->lines_spooled());
    if (const auto dir = uploader_->offline_dir()) {
      s.spool_path = dir->string();
      s.resend = "`trainhook wandb-sync " + dir->string() + "`";
    }
    s.lost = r.stats.dropped;
    if (r.stats.dropped > 0)
      s.lost_reason = support::queue_full_reason(r.stats.dropped, options_.queue_capacity(),
                                                 "plugin_config wandb.queue_capacity");
    // The folder also holds the summary and the end mark: worth syncing even
    // when every history line was delivered.
    if (s.spooled == 0 && !problem.empty() && !s.spool_path.empty())
      s.note = "the summary and end mark are saved in " + s.spool_path + ": send them with " + s.resend;
    support::log_end_of_run(support::host_logger(host_), s, !problem.empty());
    if (auto_resume_file_ && code == 0) clear_auto_resume_id(options_.dir());
  }

 private:
  // killed: what the wandb client sends for a run ended by Ctrl-C (its exit
  // hooks record 255 for a KeyboardInterrupt); 1 for any other failure.
  static constexpr int kInterruptedExitCode = 255;
  static int exitcode(support::RunOutcome o) {
    switch (o) {
      case support::RunOutcome::finished:
        return 0;
      case support::RunOutcome::killed:
        return kInterruptedExitCode;
      case support::RunOutcome::failed:
        break;
    }
    return 1;
  }

  trainhook::Host host_;
  WandbOptions options_;
  std::unique_ptr<RunUploader> uploader_;
  bool auto_resume_file_;
  std::chrono::milliseconds drain_left_;

 public:
  std::string run_id_;  // for the end line
};

WandbCallback::WandbCallback(trainhook::Setup& setup) : Integration(setup.host()) {
  // on_save only notes the folder (for WANDB_LOG_MODEL=end at train end, which
  // is waited for and so comes after it) unless checkpoints are uploaded as
  // they are saved: then it queues the upload and is waited for, so it has the
  // folder before rotation may take it.
  const uint64_t save_observed =
      TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_PREDICT) | TH_EVENT_BIT(TH_EVENT_SAVE);
  if (read_mode(setup.config_json()) == Mode::disabled) {
    disabled_ = true;  // HF #16594: disabled means nothing happens, and no key is asked for
    setup.host().set_observe_only(save_observed);
    return;
  }
  options_ = WandbOptions::from_json(setup.config_json(), host_.output_dir());
  if (options_->log_model() != LogModel::checkpoint) setup.host().set_observe_only(save_observed);
  if (options_->log_model() != LogModel::off && options_->mode() == Mode::offline)
    host_.warn(
        "wandb: WANDB_LOG_MODEL uploads need the server; in offline mode model files are not uploaded");
}

WandbRun& WandbCallback::run() { return static_cast<WandbRun&>(delivery()); }

void WandbCallback::run_began(trainhook::Event&, bool opened) {
  if (!opened) return;  // opened by an earlier event: started already
  // Connect now (in the background) rather than at the first log.
  enqueue(Record{Record::Kind::start, LoggedValues{}, 0, {}, {}});
}

std::unique_ptr<support::Delivery<Record>> WandbCallback::open_run(trainhook::Event&) {
  if (disabled_) return nullptr;
  WandbOptions st = *options_;
  RunSpec spec;
  spec.run_id = st.run_id();
  if (st.resume() == Resume::automatic && spec.run_id.empty()) {
    if (auto id = read_auto_resume_id(st.dir())) {
      spec.run_id = *id;
      host_.info("wandb: WANDB_RESUME=auto: resuming run " + *id + " that did not finish");
    }
  }
  if (spec.run_id.empty()) {
    if (st.resume() == Resume::must)
      throw ConfigError("wandb: WANDB_RESUME=must needs the run to resume in WANDB_RUN_ID (or wandb.run_id)");
    spec.run_id = new_run_id();
  }
  if (st.mode() == Mode::offline && st.resume() != Resume::none) {
    host_.warn("wandb: WANDB_RESUME is ignored in offline mode (the server's line counts are unknown)");
    st.resume(Resume::none);
  }
  if (st.resume() == Resume::automatic) st.resume(Resume::allow);
  spec.project = st.project();
  spec.entity = st.entity();
  spec.display_name = host_.run_name();
  std::vector<std::string> dropped;
  spec.config_json = config_from_training_args(host_.training_args_json(), &dropped);
  for (const auto& k : dropped)
    host_.warn("wandb: training argument '" + k + "' looks like a secret; not sent");
  spec.host = support::host_name();
  spec.job_type = st.job_type();
  spec.group = st.run_group();
  spec.tags = st.tags();
  bool auto_resume_file = false;
  if (options_->resume() == Resume::automatic) {
    write_auto_resume_id(st.dir(), spec.run_id);
    auto_resume_file = true;
  }

  trainhook::Host host = host_;
  UploaderHooks hooks;
  hooks.log = support::host_logger(host);
  hooks.request_stop = [host](const std::string& reason) { host.request_stop(reason); };
  // Only ever called on the worker thread (the base joins it before the run goes).
  hooks.take_queued = [take = queued_taker()] { return take(1000); };
  const std::string run_id = spec.run_id;
  auto uploader = std::make_unique<RunUploader>(st, spec, support::unix_seconds(), std::move(hooks));
  auto run = std::make_unique<WandbRun>(host_, *options_, std::move(uploader), auto_resume_file);
  run->run_id_ = run_id;
  return run;
}

void WandbCallback::on_log(trainhook::Event& e) {
  if (!running()) return;
  enqueue(Record{Record::Kind::log, record_of(e.values(), e.state().global_step), 0, {}, {}});
}

void WandbCallback::on_predict(trainhook::Event& e) {
  if (!running() || e.values().empty()) return;
  enqueue(Record{Record::Kind::log, record_of(e.values(), std::nullopt), 0, {}, {}});
}

void WandbCallback::on_save(trainhook::Event& e) {
  if (!running() || e.checkpoint_dir().empty()) return;
  last_checkpoint_ = std::string(e.checkpoint_dir());
  if (options_->log_model() != LogModel::checkpoint) return;
  Record r;
  r.kind = Record::Kind::upload;
  r.artifact = ArtifactUpload{std::filesystem::path(last_checkpoint_).filename().string(), last_checkpoint_};
  enqueue(std::move(r));
}

void WandbCallback::run_ending(trainhook::Event&, const support::RunEnd&) {
  if (options_->log_model() == LogModel::end) {
    std::string dir = last_checkpoint_;
    const auto state = nlohmann::json::parse(host_.trainer_state_json(), nullptr, false);
    const bool loaded_best = host_.training_arg<bool>("load_best_model_at_end", false);
    if (loaded_best && state.is_object() && state.contains("best_model_checkpoint") &&
        state["best_model_checkpoint"].is_string())
      dir = state["best_model_checkpoint"].get<std::string>();
    if (dir.empty()) {
      host_.warn(
          "wandb: WANDB_LOG_MODEL=end but no checkpoint was saved during training "
          "(save_strategy no?), so there is no model folder to upload");
    } else {
      Record r;
      r.kind = Record::Kind::upload;
      r.artifact = ArtifactUpload{"model", dir};
      enqueue(std::move(r));
    }
  }
  // Send the backlog now rather than at the next transmit interval, and wait
  // for it within finish_timeout (the drain budget, shared with the end mark);
  // the end mark follows when the callback is destroyed (after a final
  // evaluate()): the base keeps the run open, to end as finished then.
  WandbRun& r = run();
  enqueue(Record{Record::Kind::drain, LoggedValues{}, 0, {}, {}});
  const auto started = std::chrono::steady_clock::now();
  flush(r.flush_timeout());
  r.spend(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started));
}

}  // namespace trainhook::wandb
