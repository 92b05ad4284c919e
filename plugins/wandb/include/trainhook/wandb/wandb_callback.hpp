// The "wandb" integration callback (report_to wandb): HF WandbCallback's
// behaviour over our W&B-style HTTP protocol. The training thread only turns
// logs into records and enqueues them; RunUploader does all I/O on the
// worker thread of the support::Integration base. WANDB_MODE=disabled:
// the callback does nothing at all.
//
// The run ends when the callback is destroyed, not at on_train_end: HF's run
// stays open for the evaluate()/predict() logged after training (W&B finishes
// it at exit). on_train_end drains the backlog and marks the run to end with
// exit code 0 (255 when a first signal stopped training, as the wandb client
// sends for a KeyboardInterrupt); on_exception (the base's) ends it at once
// with exit code 1 and the reason in the summary as trainhook/failure;
// destroyed without either, it ends with exit code 1.
//
// WANDB_LOG_MODEL (HF semantics, our files endpoint): "checkpoint" queues every
// saved checkpoint folder for upload at on_save; "end" queues, at train end,
// the model the run ends with: the best checkpoint when load_best_model_at_end
// loaded it, else the last checkpoint saved (the plugin cannot save the model
// itself, and the trainer writes output_dir's model only after train end).
#pragma once

#include <trainhook/wandb/run_uploader.hpp>
#include <trainhook/wandb/wandb_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/integration.hpp>

#include <memory>
#include <optional>

namespace trainhook::wandb {

class WandbRun;

class WandbCallback final : public support::Integration<Record> {
 public:
  explicit WandbCallback(trainhook::Setup& setup);

  void on_log(trainhook::Event& e) override;
  void on_predict(trainhook::Event& e) override;
  void on_save(trainhook::Event& e) override;

 private:
  std::unique_ptr<support::Delivery<Record>> open_run(trainhook::Event& e) override;
  WandbRun& run();
  // The base's sequence: the start record when train begin opens the run;
  // the model upload and the drain at train end, where the run stays open.
  void run_began(trainhook::Event& e, bool opened) override;
  void run_ending(trainhook::Event& e, const support::RunEnd& end) override;
  bool keeps_run_after_train_end() const override { return true; }

  bool disabled_ = false;
  std::optional<WandbOptions> options_;
  std::string last_checkpoint_;  // the latest on_save folder (WANDB_LOG_MODEL=end uploads it)
};

}  // namespace trainhook::wandb
