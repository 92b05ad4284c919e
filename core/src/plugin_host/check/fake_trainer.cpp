#include "fake_trainer.hpp"

#include <trainhook/common/monotonic_ns.hpp>

#include <cmath>
#include <filesystem>

namespace trainhook::plugin_check {

FakeTrainer::FakeTrainer(CallbackSession& session, std::string output_dir, RunShape shape)
    : session_(session), output_dir_(std::move(output_dir)), shape_(shape) {
  state_.struct_size = TH_STATE_STRUCT_SIZE;
  state_.max_steps = static_cast<int64_t>(shape.epochs) * shape.steps_per_epoch;
  state_.logging_steps = shape.logging_steps;
  state_.eval_steps = shape.logging_steps;
  state_.save_steps = shape.save_steps;
  state_.train_batch_size = 8;
  state_.num_train_epochs = shape.epochs;
  state_.steps_in_epoch = shape.steps_per_epoch;
  control_.struct_size = TH_CONTROL_STRUCT_SIZE;
  step_.struct_size = TH_STEP_VALUES_STRUCT_SIZE;
  set_rank(0, 1);
  loss_at = [](int64_t step) { return 2.0 / (1.0 + 0.1 * static_cast<double>(step)); };
  fill_log = [this](testkit::Values& r, int64_t step) {
    r.add("loss", loss_at(step)).add("grad_norm", 0.5).add("learning_rate", 1e-3).add("epoch", state_.epoch);
  };
}

void FakeTrainer::set_rank(int32_t rank, int32_t world_size) {
  state_.process_index = rank;
  state_.world_size = world_size;
  state_.is_world_process_zero = rank == 0 ? 1 : 0;
  state_.is_local_process_zero = rank == 0 ? 1 : 0;
}

void FakeTrainer::fire(int32_t event, const th_values* values, const char* checkpoint_dir,
                       int64_t batch_index, int64_t batch_count, int32_t prediction_kind) {
  th_event_args a{};
  a.struct_size = args_struct_size;
  a.event = event;
  a.state = &state_;
  a.control = &control_;
  a.values = values;
  a.checkpoint_dir = checkpoint_dir;
  a.batch_index = batch_index;
  a.batch_count = batch_count;
  a.prediction_kind = prediction_kind;
  if (step_values && (event == TH_EVENT_PRE_OPTIMIZER_STEP || event == TH_EVENT_OPTIMIZER_STEP ||
                      event == TH_EVENT_STEP_END))
    a.step = &step_;
  a.time_ns = monotonic_ns();  // beyond args_struct_size for a trainer before 1.7: not read
  session_.fire(a);
}

void FakeTrainer::init_end() { fire(TH_EVENT_INIT_END); }

void FakeTrainer::log_step() {
  record_ = testkit::Values();
  fill_log(record_, state_.global_step);
  fire(TH_EVENT_LOG, record_.view());
  control_.should_log = 0;
}

void FakeTrainer::train(int64_t from_step, std::map<int64_t, std::map<std::string, std::string>>* saved) {
  // HF's CallbackHandler: the control flags start cleared for a train() call.
  control_ = th_control{};
  control_.struct_size = TH_CONTROL_STRUCT_SIZE;
  state_.global_step = from_step;
  state_.epoch = static_cast<double>(from_step) / shape_.steps_per_epoch;
  state_.best_model_checkpoint = nullptr;
  state_.has_best_metric = 0;
  fire(TH_EVENT_TRAIN_BEGIN);
  const int first_epoch = static_cast<int>(from_step / shape_.steps_per_epoch);
  for (int epoch = first_epoch; epoch < shape_.epochs; ++epoch) {
    control_.should_epoch_stop = 0;
    fire(TH_EVENT_EPOCH_BEGIN);
    while (state_.global_step < static_cast<int64_t>(epoch + 1) * shape_.steps_per_epoch) {
      fire(TH_EVENT_STEP_BEGIN);
      for (int micro = 1; micro < shape_.grad_accum; ++micro) fire(TH_EVENT_SUBSTEP_END);
      const int64_t next = state_.global_step + 1;
      step_.loss = loss_at(next);
      step_.grad_norm = 0.5;
      step_.learning_rate = 1e-3;
      fire(TH_EVENT_PRE_OPTIMIZER_STEP);
      fire(TH_EVENT_OPTIMIZER_STEP);
      state_.global_step = next;
      state_.epoch = static_cast<double>(next) / shape_.steps_per_epoch;
      state_.num_input_tokens_seen += 64;
      state_.total_flos += 1e6;
      fire(TH_EVENT_STEP_END);
      if (after_step) after_step(next);
      if (next % shape_.logging_steps == 0 || control_.should_log != 0) log_step();
      if (next % shape_.save_steps == 0 || control_.should_save != 0) {
        const std::string dir = output_dir_ + "/checkpoint-" + std::to_string(next);
        std::error_code ec;
        std::filesystem::create_directories(dir, ec);
        // HF writes the stateful callbacks' states into the checkpoint, then calls on_save.
        auto states = session_.save_states();
        if (saved != nullptr) (*saved)[next] = std::move(states);
        fire(TH_EVENT_SAVE, nullptr, dir.c_str());
        control_.should_save = 0;
      }
      if (control_.should_training_stop != 0 || control_.should_epoch_stop != 0) break;
    }
    fire(TH_EVENT_EPOCH_END);
    evaluate();
    if (control_.should_training_stop != 0) break;
  }
  fire(TH_EVENT_TRAIN_END);
}

void FakeTrainer::evaluate() {
  fire(TH_EVENT_EVALUATE_BEGIN);
  for (int b = 0; b < shape_.eval_batches; ++b)
    fire(TH_EVENT_PREDICTION_STEP, nullptr, nullptr, b, shape_.eval_batches, 0);
  testkit::Values metrics{{"eval_loss", loss_at(state_.global_step) * 1.1},
                          {"eval_accuracy", 0.5},
                          {"eval_runtime", 0.01},
                          {"epoch", state_.epoch}};
  fire(TH_EVENT_EVALUATE, metrics.view());
  control_.should_evaluate = 0;
  fire(TH_EVENT_LOG, metrics.view());
}

void FakeTrainer::predict() {
  for (int b = 0; b < shape_.eval_batches; ++b)
    fire(TH_EVENT_PREDICTION_STEP, nullptr, nullptr, b, shape_.eval_batches, 1);
  testkit::Values metrics{{"test_loss", 0.9}, {"test_runtime", 0.01}};
  fire(TH_EVENT_PREDICT, metrics.view());
}

}  // namespace trainhook::plugin_check
