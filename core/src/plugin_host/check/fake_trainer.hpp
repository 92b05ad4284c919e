// A training run without a model, in the Hugging Face Trainer's event order,
// for the checks to drive a plugin's callbacks through (CallbackSession):
//
//   on_init_end                                  (once, when the trainer is built)
//   on_train_begin
//   per epoch: on_epoch_begin
//     per step: on_step_begin, on_substep_end (every micro-batch but the last),
//               on_pre_optimizer_step, on_optimizer_step, on_step_end,
//               then every logging_steps on_log, every save_steps on_save
//     on_epoch_end, then evaluation: on_evaluate_begin, on_prediction_step per
//     batch, on_evaluate, on_log (the eval metrics)
//   on_train_end
//   predict: on_prediction_step per batch, on_predict
//
// TrainerState follows the run (global_step, fractional epoch, max_steps...).
// What a record holds, the loss of a step, the rank and the size of the event
// arguments (an older trainer's) are the caller's to vary.
#pragma once

#include "callback_session.hpp"

#include <trainhook/testkit/plugin_driver.hpp>

#include <functional>
#include <map>
#include <string>

namespace trainhook::plugin_check {

struct RunShape {
  int epochs = 2;
  int steps_per_epoch = 4;
  int grad_accum = 2;
  int logging_steps = 2;
  int save_steps = 4;
  int eval_batches = 2;
};

class FakeTrainer {
 public:
  FakeTrainer(CallbackSession& session, std::string output_dir, RunShape shape = {});

  // The training loss of global step `step` (default: a falling curve).
  std::function<double(int64_t step)> loss_at;
  // The numeric and string values of the LOG record of `step` (default: loss,
  // grad_norm, learning_rate, epoch). Called with an empty Values.
  std::function<void(testkit::Values& record, int64_t step)> fill_log;
  // Without step values (th_event_args.step NULL) and with this struct_size,
  // as an older trainer sends them.
  bool step_values = true;
  uint32_t args_struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
  // Called after every optimizer step (the memory check samples there).
  std::function<void(int64_t step)> after_step;

  th_state& state() noexcept { return state_; }
  void set_rank(int32_t rank, int32_t world_size);

  void init_end();
  // One train() call from global step `from_step` (0, or a checkpoint's step
  // when resuming) to the end; at each save, the callbacks' saved states are
  // kept in `saved` by step when given.
  void train(int64_t from_step, std::map<int64_t, std::map<std::string, std::string>>* saved = nullptr);
  void evaluate();
  void predict();

 private:
  void fire(int32_t event, const th_values* values = nullptr, const char* checkpoint_dir = nullptr,
            int64_t batch_index = -1, int64_t batch_count = -1, int32_t prediction_kind = 0);
  void log_step();

  CallbackSession& session_;
  std::string output_dir_;
  RunShape shape_;
  th_state state_{};
  th_control control_{};
  th_step_values step_{};
  testkit::Values record_;
};

}  // namespace trainhook::plugin_check
