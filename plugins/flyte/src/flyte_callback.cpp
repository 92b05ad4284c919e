#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/deck.hpp>
#include <trainhook/flyte/flyte_callback.hpp>
#include <trainhook/flyte/make_store.hpp>
#include <trainhook/flyte/manifest.hpp>
#include <trainhook/flyte/restore.hpp>
#include <trainhook/strings.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;

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

void FlyteCallback::enqueue_checkpoint(const fs::path& dir) {
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
  queue_->enqueue(std::move(job));
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
  enqueue_checkpoint(dir);
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
  log_(LogLevel::info, "waiting up to " + std::to_string(options_.wait_timeout().count() / 1000) +
                           " s for uploads to " + dest_->describe());
  if (!queue_->wait_idle(options_.wait_timeout())) {
    log_(LogLevel::warn, "uploads did not finish within flyte.wait_timeout; stopping them");
    queue_->shutdown();
  }
  report_uploads();
  std::error_code ec;
  fs::remove(staging_root_, ec);  // only when empty: a cancelled job may still hold its folder
}

void FlyteCallback::report_uploads() {
  std::string ok, missing;
  for (const auto& o : queue_->outcomes()) {
    if (o.status == UploadOutcome::Status::uploaded)
      ok += (ok.empty() ? "" : ", ") + o.name;
    else
      missing += (missing.empty() ? "" : "; ") + o.name + " (" + to_string(o.status) +
                 (o.detail.empty() ? "" : ": " + o.detail) + ")";
  }
  log_(LogLevel::info, "uploaded to " + dest_->describe() + ": " + (ok.empty() ? "nothing" : ok));
  if (!missing.empty()) log_(LogLevel::warn, "not uploaded: " + missing);
}

}  // namespace trainhook::flyte
