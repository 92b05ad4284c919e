// A checkpoint saved at the last step of an epoch (save_strategy steps, or a
// SIGTERM) is written at that step's end, before the epoch's end runs. A run
// killed between the two and resumed from it starts at the next epoch, so the
// epoch-end evaluation of eval_strategy epoch never happened (HF's
// get_last_checkpoint resume loses it too). Here the resumed run runs that
// epoch end first: on_epoch_end, then what the callbacks ask for (the
// evaluation).
#include "trainer_impl.hpp"

#include <spdlog/spdlog.h>

namespace trainhook {

bool Trainer::Impl::epoch_end_pending_after(const TrainingPlan& plan) const {
  if (args.eval_strategy != IntervalStrategy::epoch) return false;
  if (state.global_step <= 0 || state.global_step % plan.updates_per_epoch != 0) return false;
  // Evaluated at that step already (the checkpoint was saved at the epoch's
  // end, after its evaluation): nothing is pending.
  for (const auto& entry : state.log_history) {
    const auto step = entry.find("step");
    if (entry.contains("eval_loss") && step != entry.end() && step->is_number_integer() &&
        step->get<int64_t>() == state.global_step)
      return false;
  }
  return true;
}

void Trainer::Impl::run_pending_epoch_end() {
  spdlog::info(
      "the checkpoint was saved at the end of epoch {} before its evaluation: running that epoch's end",
      state.global_step / state.steps_in_epoch);
  // The flags restored from the checkpoint were those of its save (should_save
  // set): cleared as the next step's begin would, so only the epoch end acts.
  control.should_log = false;
  control.should_evaluate = false;
  control.should_save = false;
  fire(TH_EVENT_EPOCH_END);
  agree_on_control();
  maybe_log_save_evaluate();
}

}  // namespace trainhook
