// The "wandb" integration callback (report_to wandb): HF WandbCallback's
// behaviour over our W&B-style HTTP protocol. The training thread only turns
// logs into records and enqueues them; RunUploader does all I/O on the
// worker thread. WANDB_MODE=disabled: the callback does nothing at all.
//
// WANDB_LOG_MODEL (HF semantics, our files endpoint): "checkpoint" queues every
// saved checkpoint folder for upload at on_save; "end" queues, at train end,
// the model the run ends with: the best checkpoint when load_best_model_at_end
// loaded it, else the last checkpoint saved (the plugin cannot save the model
// itself, and the trainer writes output_dir's model only after train end).
#pragma once

#include <trainhook/wandb/run_uploader.hpp>
#include <trainhook/wandb/wandb_settings.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/worker.hpp>

#include <chrono>
#include <memory>
#include <optional>

namespace trainhook::wandb {

class WandbCallback final : public trainhook::Callback {
 public:
  explicit WandbCallback(trainhook::Setup& setup);
  ~WandbCallback() override;

  void on_train_begin(trainhook::Event& e) override;
  void on_log(trainhook::Event& e) override;
  void on_predict(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;

 private:
  void enqueue(Record r);
  // Sends the end mark, waits up to finish_timeout (the drain timeout),
  // reports what was not delivered and where it was spooled.
  void finish(int exitcode);

  trainhook::Host host_;
  bool disabled_ = false;
  std::optional<WandbSettings> settings_;
  bool auto_resume_file_ = false;
  bool train_ended_ = false;
  // What is left of finish_timeout for the end of the run (train end's drain, then the end mark).
  std::chrono::milliseconds drain_left_{0};  // on_train_end came: the run ends with exitcode 0 at destruction
  std::string last_checkpoint_;              // the latest on_save folder (WANDB_LOG_MODEL=end uploads it)
  std::unique_ptr<RunUploader> uploader_;
  std::unique_ptr<support::Worker<Record>> worker_;
};

}  // namespace trainhook::wandb
