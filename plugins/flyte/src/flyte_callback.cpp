#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/deck.hpp>
#include <trainhook/flyte/flyte_callback.hpp>
#include <trainhook/flyte/make_store.hpp>
#include <trainhook/flyte/manifest.hpp>
#include <trainhook/flyte/restore.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/end_of_run_summary.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;

namespace {
std::chrono::milliseconds remaining(std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? left : std::chrono::milliseconds(0);
}
}  // namespace

FlyteCallback::FlyteCallback(trainhook::Setup& setup)
    : host_(setup.host()), options_(FlyteOptions::parse(setup.config_json())) {
  log_ = support::host_logger(host_);
  staging_root_ = fs::path(host_.output_dir()) / ".trainhook-upload-staging";
  queue_ = std::make_unique<UploadQueue>(log_);
  // Both stores are made now so a bad location or missing credentials fail
  // the run at start, not after the first save.
  if (options_.previous()) prev_ = make_store(*options_.previous(), options_, nullptr);
  if (options_.destination()) {
    dest_ = make_store(*options_.destination(), options_, &queue_->cancellation());
    log_(LogLevel::info, "checkpoints will be uploaded to " + dest_->describe());
  } else {
    log_(LogLevel::info,
         "no checkpoint destination (flyte.checkpoint_path / TRAINHOOK_CHECKPOINT_DEST): checkpoints stay "
         "local");
  }
}

FlyteCallback::~FlyteCallback() {
  // The worker uses dest_: stop it before the store goes.
  queue_->shutdown();
  std::error_code ec;
  fs::remove(staging_root_, ec);  // only when empty
}

void FlyteCallback::on_init_end(trainhook::Event&) {
  if (!prev_) return;
  const auto args = nlohmann::json::parse(host_.training_args_json(), nullptr, false);
  const fs::path output_dir = host_.output_dir();
  const Cancellation never;                              // restore runs before training; nothing cancels it
  const std::unique_ptr<Store> prev = std::move(prev_);  // used once, here
  log_(LogLevel::info, "restoring from the previous attempt at " + prev->describe());
  RestoreResult r;
  try {
    r = restore_checkpoints(*prev, output_dir, options_.restore_all(), options_.retry(), never, log_);
  } catch (const std::exception& ex) {
    // Keep the callback alive: this attempt's own checkpoints still get uploaded.
    log_(LogLevel::error,
         "cannot restore from " + prev->describe() + ": " + ex.what() + "; training starts from scratch");
    return;
  }
  if (!r.resume_from) {
    log_(LogLevel::warn, "no complete checkpoint in " + prev->describe() +
                             (r.skipped.empty() ? std::string(" (it is empty)")
                                                : " (" + std::to_string(r.skipped.size()) + " skipped)") +
                             "; training starts from scratch");
    return;
  }
  log_(LogLevel::info, "restored " + strings::join(r.restored) + " from " + prev->describe() + " into " +
                           output_dir.string());
  if (args.is_object() && args.contains("resume_from_checkpoint") &&
      args["resume_from_checkpoint"].is_string() &&
      !args["resume_from_checkpoint"].get<std::string>().empty()) {
    log_(LogLevel::warn, "resume_from_checkpoint is set explicitly (" +
                             args["resume_from_checkpoint"].get<std::string>() + "); not replacing it with " +
                             r.resume_from->string());
  } else {
    try {
      host_.set_resume_checkpoint(r.resume_from->string());
      log_(LogLevel::info, "resuming from " + r.resume_from->string());
    } catch (const trainhook::ConfigError& refused) {
      // Keep the callback alive (uploads still matter); the run starts over.
      log_(LogLevel::error,
           "the trainer refused to resume from " + r.resume_from->string() + ": " + refused.what());
    }
  }
  // Carry the restored checkpoint forward: if this attempt dies before its
  // first save, the next attempt (whose previous prefix is OUR destination)
  // still finds it.
  if (dest_ && options_.destination()->display() != options_.previous()->display())
    enqueue_checkpoint(*r.resume_from);
}

size_t FlyteCallback::enqueue_checkpoint(const fs::path& dir) {
  const std::string name = dir.filename().string();
  const fs::path staged = stage_checkpoint(dir, staging_root_, log_);
  const bool owns_staged = staged != dir;
  const fs::path scratch = staging_root_ / (staged.filename().string() + ".manifest.json");
  Store* store = dest_.get();
  const FlyteOptions* opts = &options_;
  support::Logger log = log_;
  UploadJob job;
  job.name = name;
  job.group = "checkpoint";
  job.run = [store, staged, name, scratch, opts, log](const Cancellation& cancel) {
    const auto start = std::chrono::steady_clock::now();
    upload_checkpoint(*store, staged, name, scratch, opts->retry(), cancel, log);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
            .count();
    log(LogLevel::info,
        "uploaded " + name + " to " + store->describe() + " in " + std::to_string(ms) + " ms");
  };
  job.cleanup = [staged, owns_staged, scratch] {
    std::error_code ec;
    if (owns_staged) fs::remove_all(staged, ec);
    fs::remove(scratch, ec);
  };
  return queue_->enqueue(std::move(job));
}

void FlyteCallback::on_save(trainhook::Event& e) {
  if (!dest_) return;
  fs::path dir(std::string(e.checkpoint_dir()));
  if (dir.empty())
    dir = fs::path(host_.output_dir()) / ("checkpoint-" + std::to_string(e.state().global_step));
  if (!fs::is_directory(dir)) {
    log_(LogLevel::warn,
         "on_save: checkpoint folder '" + dir.string() + "' does not exist; nothing to upload");
    return;
  }
  last_saved_ = SavedCheckpoint{dir, enqueue_checkpoint(dir)};
}

void FlyteCallback::on_exception(trainhook::Event& e) {
  if (!dest_) return;
  const th_failure* f = e.failure();
  const std::string failure =
      f != nullptr ? support::describe_failure(*f) : std::string("error (the host gave no details)");
  // A second signal ends the run on the user's word: killed, not failed.
  const std::string status = f != nullptr && f->kind == TH_FAILURE_SIGNAL ? "KILLED" : "FAILED";
  // One wait_timeout for all of it: the wait for an upload in flight below
  // and the final wait for the queue.
  const auto deadline = std::chrono::steady_clock::now() + options_.wait_timeout();
  std::string note = "no checkpoint was saved before the failure";
  if (last_saved_) {
    const std::string name = last_saved_->dir.filename().string();
    UploadOutcome was = queue_->outcomes().at(last_saved_->outcome);
    bool was_uploading = false;
    if (was.status == UploadOutcome::Status::in_progress) {
      // Its outcome decides whether it must go again: wait for it (bounded).
      was_uploading = true;
      queue_->wait_idle(remaining(deadline));
      was = queue_->outcomes().at(last_saved_->outcome);
    }
    if (was.status == UploadOutcome::Status::uploaded || was.status == UploadOutcome::Status::in_progress) {
      note = "the last complete checkpoint " + name +
             (was_uploading ? " was uploading at the failure" : " was uploaded before the failure");
    } else if (!fs::is_directory(last_saved_->dir)) {
      note = "the last complete checkpoint " + name + " is gone from " +
             last_saved_->dir.parent_path().string() + " and was not uploaded (" + to_string(was.status) +
             ")";
    } else {
      log_(LogLevel::info, "the run failed: uploading its last complete checkpoint " + name + " again (" +
                               to_string(was.status) + (was.detail.empty() ? "" : ": " + was.detail) + ")");
      last_saved_->outcome = enqueue_checkpoint(last_saved_->dir);
      note = "the last complete checkpoint " + name + " was queued again at the failure";
    }
  }
  finish_uploads(remaining(deadline));
  if (last_saved_) {
    const UploadOutcome now = queue_->outcomes().at(last_saved_->outcome);
    note += now.status == UploadOutcome::Status::uploaded
                ? " and is uploaded"
                : " and is NOT uploaded (" + std::string(to_string(now.status)) +
                      (now.detail.empty() ? "" : ": " + now.detail) + ")";
  }
  report_uploads(status, failure, note);
}

void FlyteCallback::on_train_end(trainhook::Event&) {
  if (options_.deck()) {
    const fs::path deck = fs::path(host_.output_dir()) / kDeckFileName;
    const auto state = nlohmann::json::parse(host_.trainer_state_json(), nullptr, false);
    const std::string run = host_.run_name();
    {
      std::ofstream out(deck, std::ios::binary | std::ios::trunc);
      out << render_log_history_deck(state.is_discarded() ? nlohmann::json::object() : state,
                                     "Log history" + (run.empty() ? std::string() : " — " + run));
      if (!out.flush()) throw std::runtime_error("cannot write the log-history deck '" + deck.string() + "'");
    }
    log_(LogLevel::info, "wrote the log-history deck " + deck.string());
    if (dest_) {
      Store* store = dest_.get();
      const support::RetryPolicy retry = options_.retry();
      support::Logger log = log_;
      queue_->enqueue({kDeckFileName, "deck",
                       [store, deck, retry, log](const Cancellation& cancel) {
                         with_retries(retry, cancel, log, std::string("upload of ") + kDeckFileName,
                                      [&] { store->put_file(deck, kDeckFileName); });
                       },
                       nullptr});
    }
  }
  if (!dest_) return;
  // A first signal stopped training (checkpoint saved): the run was killed, it did not fail.
  const int sig = host_.stop_signal();
  finish_uploads(options_.wait_timeout());
  report_uploads(sig != 0 ? "KILLED" : "FINISHED", sig != 0 ? "stopped by signal " + std::to_string(sig) : "",
                 "");
}

void FlyteCallback::finish_uploads(std::chrono::milliseconds timeout) {
  log_(LogLevel::info,
       "waiting up to " + std::to_string(timeout.count() / 1000) + " s for uploads to " + dest_->describe());
  if (!queue_->wait_idle(timeout)) {
    log_(LogLevel::warn, "uploads did not finish within flyte.wait_timeout; stopping them");
    queue_->shutdown();
  }
  std::error_code ec;
  fs::remove(staging_root_, ec);  // only when empty: a cancelled job may still hold its folder
}

void FlyteCallback::report_uploads(const std::string& status, const std::string& failure,
                                   const std::string& note) {
  std::string ok, missing;
  support::EndOfRunSummary s;
  s.integration = "flyte";
  s.run = dest_->describe();
  s.status = status;
  s.failure = failure;
  s.unit = "uploads";
  // One entry per name, its latest upload: a checkpoint queued again at a
  // failure counts once, by how its last attempt went.
  std::vector<UploadOutcome> latest;
  for (const auto& o : queue_->outcomes()) {
    auto same =
        std::find_if(latest.begin(), latest.end(), [&](const UploadOutcome& l) { return l.name == o.name; });
    if (same == latest.end())
      latest.push_back(o);
    else
      *same = o;
  }
  for (const auto& o : latest) {
    if (o.status == UploadOutcome::Status::uploaded) {
      ok += (ok.empty() ? "" : ", ") + o.name;
      ++s.delivered;
    } else {
      missing += (missing.empty() ? "" : "; ") + o.name + " (" + to_string(o.status) +
                 (o.detail.empty() ? "" : ": " + o.detail) + ")";
      // A superseded checkpoint was skipped on purpose (a newer one replaced
      // it); the others were meant to reach the destination and did not.
      if (o.status != UploadOutcome::Status::superseded) ++s.spooled;
    }
  }
  log_(LogLevel::info, "uploaded to " + dest_->describe() + ": " + (ok.empty() ? "nothing" : ok));
  if (!missing.empty()) log_(LogLevel::warn, "not uploaded: " + missing);
  // What was not uploaded stays in output_dir; nothing sends it later: the
  // next attempt restores only what reached the destination.
  s.spool_path = host_.output_dir();
  s.resend = "no trainhook command uploads them later (the next attempt restores only what reached " +
             dest_->describe() + ")";
  s.note = note;
  const std::string line = support::format_end_of_run(s);
  log_(support::end_of_run_needs_attention(s) ? LogLevel::warn : LogLevel::info, line);
}

}  // namespace trainhook::flyte
