// The "tensorboard" integration (report_to tensorboard), after HF's
// TensorBoardCallback: event files under TENSORBOARD_LOGGING_DIR or
// output_dir/runs/<date>_<host>; the training arguments as text "args" (and the
// model description as "model_config") plus an hparams session at train begin;
// logged numbers as scalars and strings as texts at global_step under
// rewrite_logs tags; the session's end and an hparams experiment listing every
// scalar as a metric at train end. Only the world-zero process writes.
//
// The training thread only copies values into a queue; EventWriter's thread
// does the encoding and the I/O.
#pragma once

#include <trainhook/tensorboard/event_writer.hpp>
#include <trainhook/tensorboard/hparams.hpp>
#include <trainhook/tensorboard/options.hpp>

#include <trainhook/plugin.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace trainhook::tensorboard {

class TensorBoardCallback final : public trainhook::Callback {
 public:
  explicit TensorBoardCallback(trainhook::Setup& setup);
  ~TensorBoardCallback() override;

  void on_train_begin(trainhook::Event& e) override;
  void on_log(trainhook::Event& e) override;
  // Weight/gradient histograms when configured (histograms.hpp).
  void on_pre_optimizer_step(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;

 private:
  void open(const th_state& state);
  void finish(SessionStatus status);

  trainhook::Host host_;
  TensorBoardOptions options_;
  std::unique_ptr<EventWriter> writer_;
  std::vector<HParam> hparams_;
  bool session_started_ = false;
  int64_t last_step_ = 0;          // global_step of the last event seen, for the closing hparams events
  std::filesystem::path log_dir_;  // resolved at the first open(), reused for the rest of the run
  std::string log_dir_trial_;      // the trial log_dir_ was resolved for
};

}  // namespace trainhook::tensorboard
