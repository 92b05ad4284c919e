// throughput (--callbacks throughput): MosaicML Composer's SpeedMonitor
// numbers over a window of window_size optimizer steps, added to the log
// record of each logging step (Host::add_metric, so they reach log_history and
// every integration). Time is the steady clock at STEP_END, with evaluation
// (EVALUATE_BEGIN to EVALUATE) taken out, as Composer takes out eval time.
//
// Samples per step: per_device_train_batch_size x gradient_accumulation_steps
// x world_size from the training arguments (th_state.train_batch_size when the
// arguments lack it). Tokens: th_state.num_input_tokens_seen (counted over all
// ranks when --include_num_input_tokens_seen is on). FLOPs: th_state.total_flos
// (this rank's count, times world_size), or flops_per_sample x samples.
//
// The window restarts at every train begin (a resumed run does not measure
// the time between the runs); nothing is added until it is full.
#pragma once

#include <trainhook/throughput/throughput_options.hpp>
#include <trainhook/throughput/throughput_window.hpp>

#include <trainhook/plugin.hpp>

#include <chrono>

namespace trainhook::throughput {

class ThroughputCallback final : public trainhook::Callback {
 public:
  explicit ThroughputCallback(trainhook::Setup& setup);

  void on_train_begin(trainhook::Event& e) override;
  void on_step_end(trainhook::Event& e) override;
  void on_epoch_end(trainhook::Event& e) override;
  void on_evaluate_begin(trainhook::Event& e) override;
  void on_evaluate(trainhook::Event& e) override;

 private:
  using clock = std::chrono::steady_clock;
  void add_if_logging(trainhook::Event& e);
  double seconds_now() const;

  trainhook::Host host_;
  ThroughputOptions options_;
  ThroughputWindow window_;
  clock::time_point start_{};
  double excluded_ = 0;  // seconds spent in evaluation since start_
  std::optional<clock::time_point> eval_started_;
  StepMark total_;  // cumulative since train begin
  double flos_at_begin_ = 0;
  double tokens_at_begin_ = 0;
  int64_t last_added_step_ = -1;
  double samples_per_step_ = 0;  // over all ranks, from the arguments at train begin
};

}  // namespace trainhook::throughput
