#include <trainhook/wandb/run_uploader.hpp>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <ctime>

namespace trainhook::wandb {

namespace {

using clock_type = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string seconds_text(milliseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(d.count()) / 1000.0);
  return buf;
}

std::string iso_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

support::RetryPolicy policy_of(const WandbOptions& s) {
  return support::RetryPolicy().initial_delay(s.backoff_initial()).max_delay(s.backoff_max()).jitter(0.25);
}

}  // namespace

RunUploader::RunUploader(WandbOptions settings, RunSpec spec, double start_time, UploaderHooks hooks)
    : settings_(std::move(settings)),
      spec_(std::move(spec)),
      start_time_(start_time),
      hooks_(std::move(hooks)),
      connect_backoff_(policy_of(settings_)),
      uploads_(policy_of(settings_)) {
  if (settings_.mode() == Mode::offline) go_offline("WANDB_MODE=offline");
}

RunUploader::~RunUploader() = default;

void RunUploader::log(LogLevel level, const std::string& m) const { support::log_to(hooks_.log, level, m); }

support::HttpClient& RunUploader::http(support::WorkerContext* ctx) {
  if (!http_) {
    support::HttpClientOptions o;
    o.basic_auth("api", settings_.api_key())
        .timeout(settings_.request_timeout())
        .connect_timeout(std::min(settings_.request_timeout(), milliseconds(10000)))
        .ca_bundle(settings_.ca_bundle())
        .user_agent("trainhook-wandb/1.0");
    if (ctx != nullptr) o.abort_flag(ctx->abort_flag());
    http_ = std::make_unique<support::HttpClient>(o);
  }
  return *http_;
}

std::optional<std::filesystem::path> RunUploader::offline_dir() const {
  if (spool_) return spool_->dir();
  return std::nullopt;
}

void RunUploader::build_line(const LogRecord& rec) {
  const int64_t step = next_step_++;
  const double runtime = runtime_base_ + std::max(0.0, rec.timestamp - start_time_);
  std::string line = history_line(rec, step, runtime);
  summary_.update(rec, step, runtime);
  summary_changed_ = true;
  if (phase_ == Phase::offline)
    spool_->append(line);
  else
    streamer_->add_line(std::move(line));
}

void RunUploader::absorb(Record& r) {
  if (r.kind == Record::Kind::start) return;
  if (r.kind == Record::Kind::drain) {
    draining_ = true;
    return;
  }
  if (r.kind == Record::Kind::finish) {
    finish_ = r.exitcode;
    if (!r.failure.empty()) {
      // wandb-summary.json is free-form: the reason is shown with the run.
      summary_.set("trainhook/failure", json_string(r.failure));
      summary_changed_ = true;
    }
    draining_ = true;
    return;
  }
  if (r.kind == Record::Kind::upload) {
    if (!r.artifact) return;
    if (phase_ == Phase::offline)
      log(LogLevel::warn, "wandb: offline, so '" + r.artifact->name + "' (" + r.artifact->dir.string() +
                              ") is not uploaded (WANDB_LOG_MODEL); the files stay on disk");
    else
      uploads_.add(std::move(*r.artifact));
    return;
  }
  if (phase_ == Phase::connecting)
    unbuilt_.push_back(make_log_record(r.log));
  else
    build_line(make_log_record(r.log));
}

void RunUploader::absorb_queued() {
  if (!hooks_.take_queued) return;
  // Log records become history lines at once (into the streamer's bounded
  // buffer, or its disk spill); end marks and uploads keep their order
  // among themselves and are absorbed at the next handler call.
  for (auto& r : hooks_.take_queued()) {
    if (r.kind == Record::Kind::log && deferred_.empty())
      absorb(r);
    else
      deferred_.push_back(std::move(r));
  }
}

support::BatchResult RunUploader::handle(std::vector<Record>& batch, support::WorkerContext& ctx) {
  try {
    for (auto& r : deferred_) absorb(r);
    deferred_.clear();
    for (auto& r : batch) absorb(r);
    if (phase_ == Phase::connecting) {
      support::BatchResult c = connect(ctx);
      if (phase_ == Phase::connecting) return c;
    }
    if (phase_ == Phase::streaming) {
      support::BatchResult r = stream(ctx);
      // Records taken during the request and not yet absorbed (an end mark,
      // an upload): come back at once for them, even if nothing else is left.
      if (!deferred_.empty() && !r.has_backlog()) r.backlog_retry = milliseconds(0);
      return r;
    }
    // offline
    if (summary_changed_) {
      spool_->write_summary(summary_.line());
      summary_changed_ = false;
    }
    if (finish_) spool_->finish(*finish_);
    return {};
  } catch (const std::exception& e) {
    // Disk trouble while spooling: nothing more we can do for these records.
    log(LogLevel::error, std::string("wandb: ") + e.what());
    return support::BatchResult{0, batch.size(), milliseconds(-1)};
  }
}

support::BatchResult RunUploader::on_failure(const std::string& what, milliseconds retry_in) {
  const auto now = clock_type::now();
  if (!failing_since_) failing_since_ = now;
  const auto down = std::chrono::duration_cast<milliseconds>(now - *failing_since_);
  if (down + retry_in > settings_.offline_after()) {
    go_offline("the server was unreachable for " + seconds_text(down) + " (" + what + ")");
    return {};
  }
  if (!warned_this_streak_) {
    log(LogLevel::warn,
        "wandb: " + what + "; retrying (backoff up to " + seconds_text(settings_.backoff_max()) +
            ", switching to the offline spool after " + seconds_text(settings_.offline_after()) + ")");
    warned_this_streak_ = true;
  } else {
    log(LogLevel::debug, "wandb: " + what + "; next attempt in " + seconds_text(retry_in));
  }
  return support::BatchResult::again_in(retry_in);
}

support::BatchResult RunUploader::connect(support::WorkerContext& ctx) {
  const std::string url = settings_.base_url() + "/graphql";
  ResumeStatus resume;
  try {
    if (settings_.resume() != Resume::none) {
      auto r = http(&ctx).perform(support::HttpRequest::post_json(url, resume_status_body(spec_)));
      auto d = classify(r);
      if (d == support::RetryDecision::retry)
        return on_failure("RunResumeStatus: " + r.describe(), connect_backoff_.next_delay(&r));
      if (d == support::RetryDecision::fail) throw GraphqlError("RunResumeStatus refused: " + r.describe());
      resume = parse_resume_status(r.body);
      if (settings_.resume() == Resume::must && !resume.exists) {
        if (hooks_.request_stop)
          hooks_.request_stop("wandb: WANDB_RESUME=must but run " + spec_.run_id + " does not exist");
        throw GraphqlError("WANDB_RESUME=must but run '" + spec_.run_id + "' does not exist in project '" +
                           spec_.project + "'");
      }
      if (settings_.resume() == Resume::never && resume.exists) {
        if (hooks_.request_stop)
          hooks_.request_stop("wandb: WANDB_RESUME=never but run " + spec_.run_id + " exists");
        throw GraphqlError("WANDB_RESUME=never but run '" + spec_.run_id + "' already exists in project '" +
                           spec_.project + "'");
      }
    }
    auto r = http(&ctx).perform(support::HttpRequest::post_json(url, upsert_bucket_body(spec_)));
    auto d = classify(r);
    if (d == support::RetryDecision::retry)
      return on_failure("UpsertBucket: " + r.describe(), connect_backoff_.next_delay(&r));
    if (d == support::RetryDecision::fail) throw GraphqlError("UpsertBucket refused: " + r.describe());
    UpsertResult up = parse_upsert_response(r.body);
    StreamTarget target{settings_.base_url(), up.entity.empty() ? spec_.entity : up.entity,
                        up.project.empty() ? spec_.project : up.project,
                        up.run_id.empty() ? spec_.run_id : up.run_id};
    if (target.entity.empty())
      throw GraphqlError("UpsertBucket: the server did not name the run's entity; set WANDB_ENTITY");
    spec_.entity = target.entity;
    int64_t offset = 0;
    if (resume.exists) {
      offset = resume.history_line_count;
      next_step_ = resume.next_step;
      runtime_base_ = resume.runtime;
      summary_.load(resume.summary_json);
      log(LogLevel::info, "wandb: resuming run " + spec_.run_id + " at history line " +
                              std::to_string(offset) + ", _step " + std::to_string(next_step_));
    }
    StreamOptions so;
    so.max_request_bytes = settings_.max_request_bytes();
    // The memory bound: a lagging server makes the backlog grow on
    // disk, not in memory; the file is this process's alone (removed after).
    so.memory_lines = settings_.memory_records();
    so.spill_file = std::filesystem::path(settings_.dir()) / "wandb" /
                    ("spill-" + spec_.run_id + "-" + std::to_string(::getpid()) + ".jsonl");
    so.policy = policy_of(settings_);
    streamer_ = std::make_unique<FileStreamer>(target, offset, so);
    phase_ = Phase::streaming;
    failing_since_.reset();
    warned_this_streak_ = false;
    log(LogLevel::info, "wandb: streaming run " + target.entity + "/" + target.project + "/" + target.run_id +
                            " to " + settings_.base_url());
    for (const auto& rec : unbuilt_) build_line(rec);
    unbuilt_.clear();
  } catch (const std::exception& e) {
    log(LogLevel::error, std::string("wandb: ") + e.what());
    go_offline("the run could not be started on the server (reported above)");
  }
  return {};
}

support::BatchResult RunUploader::stream(support::WorkerContext& ctx) {
  if (summary_changed_) {
    streamer_->set_summary(summary_.line());
    summary_changed_ = false;
  }
  // The last failure's Retry-After (or backoff) holds for every send: the
  // end-of-run drain, a full backlog and file uploads included.
  if (const auto now = clock_type::now(); now < retry_not_before_)
    return support::BatchResult::again_in(std::chrono::duration_cast<milliseconds>(retry_not_before_ - now) +
                                          milliseconds(1));
  // The end-of-run mark goes last, after every model file.
  if (finish_ && !uploads_.has_work() && !streamer_->complete()) streamer_->set_complete(*finish_);
  const auto now = clock_type::now();
  const bool history_due =
      streamer_->has_work() && (draining_ || now >= next_send_ || streamer_->backlog_full());
  // Files go up while no history request is due (the transmit interval's idle time).
  if (!history_due && uploads_.has_work()) return upload_step(ctx);
  if (!streamer_->has_work()) return {};
  if (!history_due)
    return support::BatchResult::again_in(std::chrono::duration_cast<milliseconds>(next_send_ - now) +
                                          milliseconds(1));
  SendResult r = streamer_->send_once(http(&ctx), [this] { absorb_queued(); });
  switch (r.status) {
    case SendStatus::nothing_to_send:
      return {};
    case SendStatus::delivered:
      delivered_ += static_cast<int64_t>(r.lines);
      failing_since_.reset();
      if (warned_this_streak_) log(LogLevel::info, "wandb: the server answers again; streaming resumed");
      warned_this_streak_ = false;
      next_send_ = clock_type::now() + settings_.transmit_interval();
      if (r.stopped && !stop_requested_ && hooks_.request_stop) {
        stop_requested_ = true;
        hooks_.request_stop("wandb: the run was stopped from the server");
      }
      return still_busy(r.lines);
    case SendStatus::retry:
      retry_not_before_ = clock_type::now() + r.retry_in;
      if (ctx.stopping()) return support::BatchResult::again_in(r.retry_in);
      return on_failure("file_stream: " + r.message, r.retry_in);
    case SendStatus::fatal:
      log(LogLevel::error, "wandb: the server refused the history upload (not retried): " + r.message);
      go_offline("the server refused the upload (reported above)");
      return {};
  }
  return {};
}

support::BatchResult RunUploader::still_busy(uint64_t delivered) const {
  if (uploads_.has_work() || (draining_ && streamer_->has_work()) || streamer_->backlog_full())
    return support::BatchResult::again_in(milliseconds(0), delivered);
  if (!streamer_->has_work()) return support::BatchResult{delivered, 0, milliseconds(-1)};
  const auto now = clock_type::now();
  const milliseconds wait = next_send_ > now
                                ? std::chrono::duration_cast<milliseconds>(next_send_ - now) + milliseconds(1)
                                : milliseconds(0);
  return support::BatchResult::again_in(wait, delivered);
}

support::BatchResult RunUploader::upload_step(support::WorkerContext& ctx) {
  UploadResult u = uploads_.upload_once(http(&ctx), streamer_->target());
  switch (u.status) {
    case UploadStatus::nothing_to_send:
      break;
    case UploadStatus::uploaded:
      failing_since_.reset();
      if (warned_this_streak_) log(LogLevel::info, "wandb: the server answers again; uploads resumed");
      warned_this_streak_ = false;
      if (!u.finished.empty())
        log(LogLevel::info, "wandb: uploaded '" + u.finished + "' (WANDB_LOG_MODEL=" +
                                (settings_.log_model() == LogModel::end ? "end" : "checkpoint") + ")");
      break;
    case UploadStatus::skipped:
      log(LogLevel::warn, "wandb: " + u.message);
      break;
    case UploadStatus::retry:
      retry_not_before_ = clock_type::now() + u.retry_in;
      if (ctx.stopping()) return support::BatchResult::again_in(u.retry_in);
      return on_failure(u.message, u.retry_in);
    case UploadStatus::fatal:
      log(LogLevel::error, "wandb: the server refused a model file (not retried): " + u.message);
      break;
  }
  if (finish_ && !uploads_.has_work() && !streamer_->complete()) streamer_->set_complete(*finish_);
  return still_busy(0);
}

void RunUploader::go_offline(const std::string& reason) {
  if (phase_ == Phase::offline) return;
  OfflineMeta meta;
  meta.spec = spec_;
  meta.base_url = settings_.base_url();
  meta.history_offset = streamer_ ? streamer_->acked_offset() : 0;
  meta.reason = reason;
  meta.created = iso_now();
  spool_ = std::make_unique<OfflineRunWriter>(settings_.dir(), meta, static_cast<std::time_t>(start_time_));
  offline_reason_ = reason;
  const Phase was = phase_;
  phase_ = Phase::offline;
  if (streamer_) {
    streamer_->take_pending([this](const std::vector<std::string>& lines) { spool_->append(lines); });
    streamer_.reset();
  }
  if (uploads_.has_work()) {
    std::string names;
    for (const auto& d : uploads_.pending_description()) names += (names.empty() ? "" : ", ") + d;
    log(LogLevel::warn,
        "wandb: model folders not uploaded (WANDB_LOG_MODEL; the files stay on disk): " + names);
    uploads_ = ModelUploader(policy_of(settings_));
  }
  if (was == Phase::connecting) {
    for (const auto& rec : unbuilt_) build_line(rec);
    unbuilt_.clear();
  }
  spool_->write_summary(summary_.line());
  summary_changed_ = false;
  if (settings_.mode() == Mode::offline)
    log(LogLevel::info, "wandb: offline mode; writing the run to " + spool_->dir().string() +
                            " (upload it later with `trainhook wandb-sync " + spool_->dir().string() + "`)");
  else
    log(LogLevel::warn, "wandb: " + reason + "; writing the rest of the run to " + spool_->dir().string() +
                            "; upload it later with `trainhook wandb-sync " + spool_->dir().string() + "`");
}

std::string RunUploader::finalize(std::vector<Record> leftovers) {
  try {
    for (auto& r : deferred_) absorb(r);
    deferred_.clear();
    for (auto& r : leftovers) absorb(r);
    if (phase_ == Phase::streaming && summary_changed_) {
      streamer_->set_summary(summary_.line());
      summary_changed_ = false;
    }
    if (phase_ == Phase::streaming && finish_ && !streamer_->complete()) streamer_->set_complete(*finish_);
    if (phase_ == Phase::streaming && !streamer_->has_work() && !uploads_.has_work()) return "";
    std::string undelivered;
    if (phase_ == Phase::streaming)
      undelivered = std::to_string(streamer_->pending_lines()) + " history line(s)" +
                    (streamer_->summary_dirty() ? ", the summary" : "") +
                    (streamer_->complete() && !streamer_->complete_acked() ? ", the end-of-run mark" : "") +
                    (uploads_.has_work()
                         ? ", " + std::to_string(uploads_.pending_description().size()) + " model folder(s)"
                         : std::string());
    else if (phase_ == Phase::connecting)
      undelivered = "the run (" + std::to_string(unbuilt_.size()) + " history line(s))";
    if (phase_ != Phase::offline)
      go_offline("not delivered within finish_timeout " + seconds_text(settings_.finish_timeout()));
    if (summary_changed_) spool_->write_summary(summary_.line());
    summary_changed_ = false;
    if (finish_) spool_->finish(*finish_);
    if (settings_.mode() == Mode::offline) return "";
    return "not delivered to " + settings_.base_url() + ": " +
           (undelivered.empty() ? offline_reason_
                                : undelivered + " (drain timeout: finish_timeout " +
                                      seconds_text(settings_.finish_timeout()) + ")");
  } catch (const std::exception& e) {
    return std::string("the run could not be delivered or saved: ") + e.what();
  }
}

int64_t RunUploader::lines_spooled() const noexcept { return spool_ ? spool_->lines_written() : 0; }

}  // namespace trainhook::wandb
