// Mirrors TrainerState/TrainerControl into the C structs of abi.h. Called before
// every event, so it only copies numbers and borrows strings (no allocation).
#include <trainhook/callbacks/state.hpp>

namespace trainhook {

void to_c(const TrainerState& s, th_state& out) noexcept {
  out = th_state{};  // zeroed: padding and any field added later read as 0
  out.struct_size = TH_STATE_STRUCT_SIZE;
  out.is_local_process_zero = s.is_local_process_zero ? 1 : 0;
  out.epoch = s.epoch;
  out.global_step = s.global_step;
  out.max_steps = s.max_steps;
  out.logging_steps = s.logging_steps;
  out.eval_steps = s.eval_steps;
  out.save_steps = s.save_steps;
  out.train_batch_size = s.train_batch_size;
  out.num_train_epochs = s.num_train_epochs;
  out.total_flos = s.total_flos;
  out.num_input_tokens_seen = s.num_input_tokens_seen;
  out.has_best_metric = s.best_metric.has_value() ? 1 : 0;
  out.is_world_process_zero = s.is_world_process_zero ? 1 : 0;
  out.best_metric = s.best_metric.value_or(0.0);
  out.best_global_step = s.best_global_step.value_or(0);
  // Borrowed from `s`: valid while `s` is alive and unchanged.
  out.best_model_checkpoint = s.best_model_checkpoint ? s.best_model_checkpoint->c_str() : nullptr;
  out.trial_name = s.trial_name ? s.trial_name->c_str() : nullptr;
  out.process_index = s.process_index;
  out.world_size = s.world_size;
  out.steps_in_epoch = s.steps_in_epoch;
}

void to_c(const TrainerControl& c, th_control& out) noexcept {
  out = th_control{};
  out.struct_size = TH_CONTROL_STRUCT_SIZE;
  out.should_training_stop = c.should_training_stop ? 1 : 0;
  out.should_epoch_stop = c.should_epoch_stop ? 1 : 0;
  out.should_save = c.should_save ? 1 : 0;
  out.should_evaluate = c.should_evaluate ? 1 : 0;
  out.should_log = c.should_log ? 1 : 0;
}

void from_c(const th_control& in, TrainerControl& c) noexcept {
  c.should_training_stop = in.should_training_stop != 0;
  c.should_epoch_stop = in.should_epoch_stop != 0;
  c.should_save = in.should_save != 0;
  c.should_evaluate = in.should_evaluate != 0;
  c.should_log = in.should_log != 0;
}

}  // namespace trainhook
