// Mirrors TrainerState/TrainerControl into the C structs of abi.h. Called before
// every event, so it only copies numbers and borrows strings (no allocation).
#include <trainhook/callbacks/state.hpp>

namespace trainhook {

// Each struct is built from a full aggregate list (a field added to abi.h and not
// here is a -Wmissing-field-initializers error) instead of being zeroed and then
// filled: zeroing the 144-byte th_state compiles to `rep stos`, whose start-up cost
// was most of CallbackHandler::fire's fixed time (bench_dispatch).
void to_c(const TrainerState& s, th_state& out) noexcept {
  out = th_state{
      TH_STATE_STRUCT_SIZE,
      s.is_local_process_zero ? 1 : 0,
      s.epoch,
      s.global_step,
      s.max_steps,
      s.logging_steps,
      s.eval_steps,
      s.save_steps,
      s.train_batch_size,
      s.num_train_epochs,
      s.total_flos,
      s.num_input_tokens_seen,
      s.best_metric.has_value() ? 1 : 0,
      s.is_world_process_zero ? 1 : 0,
      s.best_metric.value_or(0.0),
      s.best_global_step.value_or(0),
      // Borrowed from `s`: valid while `s` is alive and unchanged.
      s.best_model_checkpoint ? s.best_model_checkpoint->c_str() : nullptr,
      s.trial_name ? s.trial_name->c_str() : nullptr,
      s.process_index,
      s.world_size,
      s.steps_in_epoch,
  };
}

void to_c(const TrainerControl& c, th_control& out) noexcept {
  out = th_control{
      TH_CONTROL_STRUCT_SIZE, c.should_training_stop ? 1 : 0, c.should_epoch_stop ? 1 : 0,
      c.should_save ? 1 : 0,  c.should_evaluate ? 1 : 0,      c.should_log ? 1 : 0,
  };
}

void from_c(const th_control& in, TrainerControl& c) noexcept {
  c.should_training_stop = in.should_training_stop != 0;
  c.should_epoch_stop = in.should_epoch_stop != 0;
  c.should_save = in.should_save != 0;
  c.should_evaluate = in.should_evaluate != 0;
  c.should_log = in.should_log != 0;
}

std::string changed_flags(const th_control& before, const th_control& after) {
  std::string changed;
  auto note = [&](const char* flag, int32_t was, int32_t now) {
    if (was != now) changed += std::string(changed.empty() ? "" : ", ") + flag;
  };
  note("should_training_stop", before.should_training_stop, after.should_training_stop);
  note("should_epoch_stop", before.should_epoch_stop, after.should_epoch_stop);
  note("should_save", before.should_save, after.should_save);
  note("should_evaluate", before.should_evaluate, after.should_evaluate);
  note("should_log", before.should_log, after.should_log);
  return changed;
}

}  // namespace trainhook
