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
#pragma once

#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/flyte/upload_queue.hpp>
#include <trainhook/support/log.hpp>

#include <trainhook/plugin.hpp>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

namespace trainhook::flyte {

class FlyteCallback final : public trainhook::Callback {
 public:
  explicit FlyteCallback(trainhook::Setup& setup);
  ~FlyteCallback() override;

  void on_init_end(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;
  void on_exception(trainhook::Event& e) override;

 private:
  // The newest checkpoint on_save reported (complete) and its upload's index
  // in UploadQueue::outcomes().
  struct SavedCheckpoint {
    std::filesystem::path dir;
    size_t outcome = 0;
  };

  size_t enqueue_checkpoint(const std::filesystem::path& dir);
  // Waits for the uploads up to `timeout`, stopping them after it.
  void finish_uploads(std::chrono::milliseconds timeout);
  // "uploaded to ...", "not uploaded: ..." and the end-of-run line; `note`
  // goes into the end line.
  void report_uploads(const std::string& status, const std::string& failure, const std::string& note);

  trainhook::Host host_;
  FlyteOptions options_;
  support::Logger log_;
  std::filesystem::path staging_root_;
  std::unique_ptr<UploadQueue> queue_;  // its worker is joined in the destructor, before dest_ goes
  std::unique_ptr<Store> prev_;         // the previous attempt; used (and released) in on_init_end
  std::unique_ptr<Store> dest_;         // used only by the queue's worker thread; null = no destination
  std::optional<SavedCheckpoint> last_saved_;
};

}  // namespace trainhook::flyte
