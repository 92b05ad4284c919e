#include <trainhook/throughput/throughput_callback.hpp>

#include <algorithm>

namespace trainhook::throughput {

ThroughputCallback::ThroughputCallback(trainhook::Setup& setup)
    : host_(setup.host()),
      options_(ThroughputOptions::from_json(setup.config_json())),
      window_(static_cast<size_t>(options_.window_size())) {
  if (!host_.has_model_access())
    throw ConfigError("throughput needs a trainer with ABI 1.1 (plugin metrics in the logs)");
}

double ThroughputCallback::seconds_now() const {
  return std::chrono::duration<double>(clock::now() - start_).count() - excluded_;
}

void ThroughputCallback::on_train_begin(trainhook::Event& e) {
  const th_state& st = e.state();
  window_.clear();
  start_ = clock::now();
  excluded_ = 0;
  eval_started_.reset();
  total_ = StepMark{};
  flos_at_begin_ = st.total_flos;
  tokens_at_begin_ = static_cast<double>(st.num_input_tokens_seen);
  last_added_step_ = -1;
  // Once per run (the arguments do not change; reading them per step would cost more than the rest).
  samples_per_step_ = static_cast<double>(host_.total_train_batch_size(st));
  // The first mark: the window's first step starts now.
  window_.add(total_);
}

void ThroughputCallback::on_step_end(trainhook::Event& e) {
  const th_state& st = e.state();
  total_.seconds = seconds_now();
  total_.samples += samples_per_step_;
  total_.tokens = static_cast<double>(st.num_input_tokens_seen) - tokens_at_begin_;
  total_.flops = options_.flops_per_sample()
                     ? *options_.flops_per_sample() * total_.samples
                     : (st.total_flos - flos_at_begin_) * static_cast<double>(std::max(1, st.world_size));
  window_.add(total_);
  add_if_logging(e);
}

// logging_strategy epoch: the log comes after EPOCH_END.
void ThroughputCallback::on_epoch_end(trainhook::Event& e) { add_if_logging(e); }

void ThroughputCallback::add_if_logging(trainhook::Event& e) {
  // DefaultFlowCallback runs first and has set should_log for this step; a
  // value added on a step that does not log would land in a later record.
  if (!e.control().should_log || e.state().global_step == last_added_step_ || !window_.full()) return;
  WindowSettings s;
  s.world_size = e.state().world_size;
  s.peak_flops = options_.peak_flops();
  for (const auto& [name, value] : window_.metrics(s)) host_.add_metric(name, value);
  last_added_step_ = e.state().global_step;
}

void ThroughputCallback::on_evaluate_begin(trainhook::Event&) { eval_started_ = clock::now(); }

void ThroughputCallback::on_evaluate(trainhook::Event&) {
  if (!eval_started_) return;
  excluded_ += std::chrono::duration<double>(clock::now() - *eval_started_).count();
  eval_started_.reset();
}

}  // namespace trainhook::throughput
