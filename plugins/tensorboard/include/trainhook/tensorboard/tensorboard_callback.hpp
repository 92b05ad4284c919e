// The "tensorboard" integration (report_to tensorboard), after HF's
// TensorBoardCallback: event files under TENSORBOARD_LOGGING_DIR or
// output_dir/runs/<date>_<host>; the training arguments as text "args" (and the
// model description as "model_config") plus an hparams session at train begin;
// logged numbers as scalars and strings as texts at global_step under
// rewrite_logs tags; the session's end and an hparams experiment listing every
// scalar as a metric at train end (a failed session when the callback is
// destroyed without train end). On EXCEPTION (the base's on_exception) the
// run closes at once: a text trainhook/failure "<kind> at step N: message",
// a failed session, the file flushed and closed. Only the world-zero process
// writes (the rank rule of support::IntegrationCallback). The base
// (support::Integration) opens and ends the run; this class writes the records.
//
// The training thread only copies values into a queue; the base's worker
// thread does the encoding and the I/O (EventFileDelivery). A writer reopened
// after train end (the final evaluate()'s log) adds an event file to the same
// folder.
#pragma once

#include <trainhook/tensorboard/event_writer.hpp>
#include <trainhook/tensorboard/hparams.hpp>
#include <trainhook/tensorboard/tensorboard_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/integration.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace trainhook::tensorboard {

class TensorBoardRun;

class TensorBoardCallback final : public support::Integration<EventItem> {
 public:
  explicit TensorBoardCallback(trainhook::Setup& setup);

  void on_log(trainhook::Event& e) override;
  // Weight/gradient histograms when configured (histograms.hpp); observe-only
  // (isolated: no round trip) when they are not. The constructor declares
  // these two, the events this class handles besides train begin and end.
  void on_pre_optimizer_step(trainhook::Event& e) override;

 private:
  std::unique_ptr<support::Delivery<EventItem>> open_run(trainhook::Event& e) override;
  TensorBoardRun& run();
  // The base's sequence: args, model_config and the hparams session start
  // at train begin; the last step noted before the run ends at train end.
  void run_began(trainhook::Event& e, bool opened) override;
  void run_ending(trainhook::Event& e, const support::RunEnd& end) override;

  TensorBoardOptions options_;
  std::filesystem::path log_dir_;  // resolved at the first open(), reused for the rest of the run
  std::string log_dir_trial_;      // the trial log_dir_ was resolved for
  bool trained_ = false;           // on_train_end closed a run: a later file is the final evaluate()'s
};

}  // namespace trainhook::tensorboard
