#include <trainhook/progress/progress_callback.hpp>

#include <trainhook/progress/log_format.hpp>
#include <trainhook/progress/progress_options.hpp>

namespace trainhook::progress {

ProgressCallback::ProgressCallback(trainhook::Setup& setup)
    : ProgressCallback(setup.host(), ProgressOptions::from_json(setup.config_json()).display_options()) {}

ProgressCallback::ProgressCallback(const trainhook::Host& host, const DisplayOptions& options)
    : host_(host), display_(options) {}

void ProgressCallback::on_train_begin(trainhook::Event& e) {
  if (!e.is_world_process_zero()) return;
  training_ = true;
  loss_.reset();
  learning_rate_.reset();
  display_.begin_training(e.state().global_step, e.state().max_steps);
}

void ProgressCallback::on_step_end(trainhook::Event& e) {
  if (training_) display_.train_step(e.state().global_step);  // an atomic store; drawn later
}

void ProgressCallback::on_prediction_step(trainhook::Event& e) {
  if (e.is_world_process_zero()) display_.prediction_step(e.batch_index(), e.batch_count(), e.is_predict());
}

void ProgressCallback::on_evaluate(trainhook::Event& e) {
  if (e.is_world_process_zero()) display_.end_prediction();
}

void ProgressCallback::on_predict(trainhook::Event& e) {
  if (e.is_world_process_zero()) display_.end_prediction();
}

void ProgressCallback::on_log(trainhook::Event& e) {
  // As HF: only while the training bar exists, and only on world zero.
  if (!training_ || !e.is_world_process_zero()) return;
  const trainhook::Values logs = e.values();
  bool postfix_changed = false;
  if (auto loss = logs.find("loss")) loss_ = *loss, postfix_changed = true;
  if (auto lr = logs.find("learning_rate")) learning_rate_ = *lr, postfix_changed = true;
  if (postfix_changed) display_.set_postfix(loss_, learning_rate_);
  display_.print_logs(copy_logs(e.raw()->values), LogFormatOptions{});
}

void ProgressCallback::on_train_end(trainhook::Event& e) {
  if (!training_) return;
  training_ = false;
  display_.end_training(e.state().global_step);
}

}  // namespace trainhook::progress
