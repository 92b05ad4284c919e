// The `flyte` integration (--report_to flyte): Flyte-style checkpointing for a
// job that may be rescheduled. An integration: the trainer creates it on world
// process zero only (docs/plugins.md, "Data-parallel rules"), so no event checks
// the rank.
//  - on_init_end: restore the newest complete checkpoint of the previous
//    attempt into output_dir and make the trainer resume from it.
//  - on_save: upload checkpoint-<step>/ in the background.
//  - on_train_end: write the log-history deck, upload it, wait for the uploads
//    up to wait_timeout and report what was and was not uploaded.
#pragma once

#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/flyte/upload_queue.hpp>
#include <trainhook/support/log.hpp>

#include <trainhook/plugin.hpp>

#include <filesystem>
#include <memory>

namespace trainhook::flyte {

class FlyteCallback final : public trainhook::Callback {
 public:
  explicit FlyteCallback(trainhook::Setup& setup);
  ~FlyteCallback() override;

  void on_init_end(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;

 private:
  void enqueue_checkpoint(const std::filesystem::path& dir);
  void report_uploads();

  trainhook::Host host_;
  FlyteOptions options_;
  support::Logger log_;
  std::filesystem::path staging_root_;
  std::unique_ptr<UploadQueue> queue_;  // its worker is joined in the destructor, before dest_ goes
  std::unique_ptr<Store> prev_;         // the previous attempt; used (and released) in on_init_end
  std::unique_ptr<Store> dest_;         // used only by the queue's worker thread; null = no destination
};

}  // namespace trainhook::flyte
