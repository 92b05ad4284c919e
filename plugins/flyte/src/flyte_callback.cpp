#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/deck.hpp>
#include <trainhook/flyte/flyte_callback.hpp>
#include <trainhook/flyte/make_store.hpp>
#include <trainhook/flyte/manifest.hpp>
#include <trainhook/flyte/restore.hpp>
#include <trainhook/strings.hpp>
#include <trainhook/support/end_of_run_summary.hpp>

#include <nlohmann/json.hpp>

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
    : Integration(setup.host()), options_(FlyteOptions::from_json(setup.config_json())) {
  log_ = support::host_logger(host_);
  staging_ = std::make_shared<StagingFolders>(fs::path(host_.output_dir()) / ".trainhook-upload-staging");
  // Both stores are made now so a bad location or missing credentials fail
  // the run at start, not after the first save.
  if (options_.previous()) prev_ = make_store(*options_.previous(), options_, nullptr);
  if (options_.destination()) {
    dest_ = make_store(*options_.destination(), options_, &cancel_);
    log_(LogLevel::info, "checkpoints will be uploaded to " + dest_->describe());
  } else {
    log_(LogLevel::info,
         "no checkpoint destination (flyte.checkpoint_path / TRAINHOOK_CHECKPOINT_DEST): checkpoints stay "
         "local");
  }
}

FlyteCallback::~FlyteCallback() {
  // Destroyed with uploads open (neither train end nor a failure came): the
  // worker uses dest_ and outcomes_, so the run ends here, before they go,
  // without waiting (the upload in flight is cancelled).
  if (running()) {
    static_cast<UploadDelivery&>(delivery()).set_flush_timeout(std::chrono::milliseconds(0));
    try {
      finish(support::RunOutcome::failed);
    } catch (...) {
      // Nothing may leave a destructor; the report said what it could.
    }
  }
  staging_->clear();
}

std::unique_ptr<support::Delivery<Upload>> FlyteCallback::open_run(trainhook::Event&) {
  if (!dest_ || ended_) return nullptr;
  staging_->prepare();  // so that saves only link (see StagingFolders)
  return std::make_unique<UploadDelivery>(
      log_, outcomes_, cancel_, [this](const support::DeliveryResult<Upload>& r) { report_uploads(r); });
}

void FlyteCallback::on_init_end(trainhook::Event& e) {
  if (!prev_) return;
  const std::string resume_from = host_.training_arg<std::string>("resume_from_checkpoint", "");
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
  if (!resume_from.empty()) {
    log_(LogLevel::warn, "resume_from_checkpoint is set explicitly (" + resume_from + "); not replacing it with " +
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
    enqueue_checkpoint(e, *r.resume_from);
}

size_t FlyteCallback::enqueue_checkpoint(trainhook::Event& e, const fs::path& dir) {
  const std::string name = dir.filename().string();
  const fs::path staged = stage_checkpoint(dir, *staging_, log_);
  const bool owns_staged = staged != dir;
  const fs::path scratch = staging_->root() / (staged.filename().string() + ".manifest.json");
  Store* store = dest_.get();
  const FlyteOptions* opts = &options_;
  support::Logger log = log_;
  Upload u;
  u.name = name;
  u.group = "checkpoint";
  u.run = [store, staged, name, scratch, opts, log](const Cancellation& cancel) {
    const auto start = std::chrono::steady_clock::now();
    upload_checkpoint(*store, staged, name, scratch, opts->retry(), cancel, log);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
            .count();
    log(LogLevel::info,
        "uploaded " + name + " to " + store->describe() + " in " + std::to_string(ms) + " ms");
  };
  u.cleanup = [staging = staging_, staged, owns_staged, scratch] {
    std::error_code ec;
    fs::remove(scratch, ec);
    if (owns_staged) staging->give_back(staged);
  };
  return enqueue_upload(e, std::move(u));
}

size_t FlyteCallback::enqueue_upload(trainhook::Event& e, Upload u) {
  u.outcome = outcomes_.add(u.name);
  const size_t row = u.outcome;
  std::function<void()> cleanup = u.cleanup;  // the record is gone when enqueue() refuses it
  if (!ended_ && start(e) && enqueue(std::move(u))) return row;
  outcomes_.set(row, support::RecordStatus::not_started,
                running() ? "the upload queue is full" : "the uploader was already stopped");
  if (cleanup) {
    try {
      cleanup();
    } catch (...) {  // best effort, as for every upload
    }
  }
  return row;
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
  last_saved_ = SavedCheckpoint{dir, enqueue_checkpoint(e, dir)};
}

void FlyteCallback::run_failing(trainhook::Event& e, const support::RunEnd&) {
  // One wait_timeout for all of it: the wait for an upload in flight below
  // and the final wait for the queue.
  const auto deadline = std::chrono::steady_clock::now() + options_.wait_timeout();
  std::string note = "no checkpoint was saved before the failure";
  end_note_outcome_.reset();
  if (last_saved_) {
    using support::RecordStatus;
    const std::string name = last_saved_->dir.filename().string();
    support::RecordOutcome was = outcomes_.at(last_saved_->outcome);
    bool was_uploading = false;
    if (was.status == RecordStatus::waiting) {
      // Its outcome decides whether it must go again: wait for it (bounded).
      was_uploading = true;
      flush(remaining(deadline));
      was = outcomes_.at(last_saved_->outcome);
    }
    if (was.status == RecordStatus::delivered || was.status == RecordStatus::waiting) {
      note = "the last complete checkpoint " + name +
             (was_uploading ? " was uploading at the failure" : " was uploaded before the failure");
    } else if (!fs::is_directory(last_saved_->dir)) {
      note = "the last complete checkpoint " + name + " is gone from " +
             last_saved_->dir.parent_path().string() + " and was not uploaded (" + to_string(was.status) +
             ")";
    } else {
      log_(LogLevel::info, "the run failed: uploading its last complete checkpoint " + name + " again (" +
                               to_string(was.status) + (was.detail.empty() ? "" : ": " + was.detail) + ")");
      last_saved_->outcome = enqueue_checkpoint(e, last_saved_->dir);
      note = "the last complete checkpoint " + name + " was queued again at the failure";
    }
    end_note_outcome_ = last_saved_->outcome;
  }
  end_note_ = note;
  // The base ends it failed with the failure as its reason; killed for a
  // second signal (the user ended the run). No deck is written.
  prepare_end(remaining(deadline));
}

void FlyteCallback::train_ending(trainhook::Event& e) {
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
      Upload u;
      u.name = kDeckFileName;
      u.group = "deck";
      u.run = [store, deck, retry, log](const Cancellation& cancel) {
        with_retries(retry, cancel, log, std::string("upload of ") + kDeckFileName,
                     [&] { store->put_file(deck, kDeckFileName); });
      };
      enqueue_upload(e, std::move(u));
    }
  }
}

// The base ends it FINISHED, or KILLED when a first signal stopped training
// (checkpoint saved).
void FlyteCallback::run_ending(trainhook::Event&, const support::RunEnd&) {
  end_note_.clear();
  end_note_outcome_.reset();
  prepare_end(options_.wait_timeout());
}

void FlyteCallback::prepare_end(std::chrono::milliseconds timeout) {
  log_(LogLevel::info,
       "waiting up to " + std::to_string(timeout.count() / 1000) + " s for uploads to " + dest_->describe());
  static_cast<UploadDelivery&>(delivery()).set_flush_timeout(timeout);
  ended_ = true;  // the base's finish() follows; report_uploads() runs inside it
}

void FlyteCallback::report_uploads(const support::DeliveryResult<Upload>& result) {
  if (!result.drained)
    log_(LogLevel::warn, result.interrupted
                             ? "a signal ended the wait for uploads; stopped them"
                             : "uploads did not finish within flyte.wait_timeout; stopped them");
  staging_->clear();
  std::string ok, missing;
  support::EndOfRunSummary s;
  s.integration = "flyte";
  s.run = dest_->describe();
  s.status = support::run_status_name(result.end.outcome);
  s.failure = support::describe_run_end(result.end);
  s.unit = "uploads";
  // One entry per name, its latest upload: a checkpoint queued again at a
  // failure counts once, by how its last attempt went.
  for (const auto& o : outcomes_.latest_per_name()) {
    if (o.status == support::RecordStatus::delivered) {
      ok += (ok.empty() ? "" : ", ") + o.name;
      ++s.delivered;
    } else {
      missing += (missing.empty() ? "" : "; ") + o.name + " (" + to_string(o.status) +
                 (o.detail.empty() ? "" : ": " + o.detail) + ")";
      // A superseded checkpoint was skipped on purpose (a newer one replaced
      // it); the others were meant to reach the destination and did not.
      if (o.status != support::RecordStatus::superseded) ++s.spooled;
    }
  }
  log_(LogLevel::info, "uploaded to " + dest_->describe() + ": " + (ok.empty() ? "nothing" : ok));
  if (!missing.empty()) log_(LogLevel::warn, "not uploaded: " + missing);
  // What was not uploaded stays in output_dir; nothing sends it later: the
  // next attempt restores only what reached the destination.
  s.spool_path = host_.output_dir();
  s.resend = "no trainhook command uploads them later (the next attempt restores only what reached " +
             dest_->describe() + ")";
  s.note = end_note_;
  if (end_note_outcome_) {
    const support::RecordOutcome now = outcomes_.at(*end_note_outcome_);
    s.note += now.status == support::RecordStatus::delivered
                  ? " and is uploaded"
                  : " and is NOT uploaded (" + std::string(to_string(now.status)) +
                        (now.detail.empty() ? "" : ": " + now.detail) + ")";
  }
  support::log_end_of_run(log_, s);
}

}  // namespace trainhook::flyte
