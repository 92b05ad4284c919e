// The `flyte` integration (--report_to flyte): Flyte-style checkpointing for a
// job that may be rescheduled. An integration: the trainer creates it on world
// process zero only (docs/plugins.md, "Data-parallel rules"), so no event checks
// the rank.
//  - on_init_end: restore the newest complete checkpoint of the previous
//    attempt into output_dir and make the trainer resume from it.
//  - on_save: upload checkpoint-<step>/ in the background.
//  - on_train_end: write the log-history deck, upload it, wait for the uploads
//    up to wait_timeout and report what was and was not uploaded.
//  - on_exception (ABI 1.3: the run is ending by an error): make sure the last
//    COMPLETE checkpoint (the newest one on_save reported: on_save fires only
//    once a save finished, so a folder half written when the error came is
//    never it) reaches the destination: uploaded already, uploading, or
//    queued again when its upload failed; then wait for the uploads up to
//    wait_timeout and report as at train end. No deck is written.
// Both ends write one end-of-run line (support/end_of_run_summary.hpp).
//
// The uploads run on the integration base (support/integration.hpp), one run
// from the first upload to train end or the failure: the base owns the
// sequence (it calls the hooks below and ends the run), the worker, the
// bounded wait (flyte.wait_timeout; a signal during it ends it), the stop that
// cancels the upload in flight, and the outcome; upload_delivery.hpp
// says how an upload runs; this file, what to upload and what to report.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/staging_folders.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/flyte/upload_delivery.hpp>
#include <trainhook/support/integration.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/record_outcomes.hpp>

#include <trainhook/plugin.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace trainhook::flyte {

class FlyteCallback final : public support::Integration<Upload> {
 public:
  explicit FlyteCallback(trainhook::Setup& setup);
  ~FlyteCallback() override;

  void on_init_end(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;

 protected:
  // Null without a destination (nothing is uploaded, no run is opened) or
  // once the run has ended. The base opens the run at train begin, before the
  // training loop: its worker thread and its spare staging folders would
  // otherwise be made inside the first save.
  std::unique_ptr<support::Delivery<Upload>> open_run(trainhook::Event& e) override;
  // The base's sequence: the deck at every train end; the end notes and the
  // wait before the base ends the run at train end and at on_exception (a run
  // is opened to end it if none is open: the uploads are reported either way).
  void train_ending(trainhook::Event& e) override;
  void run_ending(trainhook::Event& e, const support::RunEnd& end) override;
  void run_failing(trainhook::Event& e, const support::RunEnd& end) override;
  bool opens_run_to_end() const override { return true; }

 private:
  // The newest checkpoint on_save reported (complete) and its upload's row
  // in outcomes_.
  struct SavedCheckpoint {
    std::filesystem::path dir;
    size_t outcome = 0;
  };

  size_t enqueue_checkpoint(trainhook::Event& e, const std::filesystem::path& dir);
  // Queues u (opening the run if needed); when it cannot be queued, its row
  // says so and its cleanup runs. Returns its row.
  size_t enqueue_upload(trainhook::Event& e, Upload u);
  // Before the base ends the run: it waits for the uploads up to `timeout`,
  // stopping them after it.
  void prepare_end(std::chrono::milliseconds timeout);
  // On the base's report: "uploaded to ...", "not uploaded: ..." and the end-of-run line.
  void report_uploads(const support::DeliveryResult<Upload>& result);

  FlyteOptions options_;
  support::Logger log_;
  // Shared with the uploads' cleanups, which give their folders back.
  std::shared_ptr<StagingFolders> staging_;
  support::RecordOutcomes outcomes_;  // every upload of this callback, for the reports
  Cancellation cancel_;               // set by the run's stop flag; watched by dest_
  std::unique_ptr<Store> prev_;       // the previous attempt; used (and released) in on_init_end
  std::unique_ptr<Store> dest_;       // used only by the worker thread; null = no destination
  std::optional<SavedCheckpoint> last_saved_;
  // The run has ended (train end or a failure): one end per callback, as the
  // trainer gives; later uploads are refused and reported as not started.
  bool ended_ = false;
  // For on_exception's end line: what happened to the last complete checkpoint.
  std::string end_note_;
  std::optional<size_t> end_note_outcome_;  // its upload's row, whose final state completes the note
};

}  // namespace trainhook::flyte
