// Trainer::train(): HF's _inner_training_loop, event for event (the event
// order of the Hugging Face Trainer, transformers trainer.py).
#include "trainer_impl.hpp"

#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/data/batch_sampler.hpp>
#include <trainhook/distributed/process_group.hpp>
#include <trainhook/trainer/checkpoint_dirs.hpp>
#include <trainhook/trainer/checkpoint_io.hpp>
#include <trainhook/trainer/optimizer_factory.hpp>
#include <trainhook/trainer/reproducibility.hpp>

#include <spdlog/spdlog.h>

#include <cmath>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

bool truthy(const std::string& s) { return s == "true" || s == "True" || s == "TRUE" || s == "1"; }

}  // namespace

std::optional<fs::path> Trainer::Impl::resolve_resume(std::optional<std::string> resume) {
  if (!resume) resume = host->take_resume_checkpoint();
  if (!resume) resume = args.resume_from_checkpoint;
  if (!resume || resume->empty() || *resume == "false" || *resume == "False") return std::nullopt;
  if (truthy(*resume)) {
    auto latest = latest_checkpoint(args.output_dir);
    if (!latest) {
      throw std::runtime_error(
          "resume_from_checkpoint=true: no complete checkpoint-<step> folder in output_dir '" +
          args.output_dir + "'");
    }
    return latest;
  }
  const fs::path dir(*resume);
  if (!fs::is_directory(dir))
    throw std::runtime_error("resume_from_checkpoint: '" + *resume + "' is not a folder");
  if (!fs::exists(dir / kTrainerStateFile)) {
    throw std::runtime_error("resume_from_checkpoint: '" + *resume + "' has no " + kTrainerStateFile +
                             " (not a complete checkpoint)");
  }
  return dir;
}

TrainOutput Trainer::Impl::train(std::optional<std::string> resume_arg) {
  if (!train_dataset) throw std::invalid_argument("train: the Trainer has no train_dataset");
  const auto resume = resolve_resume(std::move(resume_arg));
  if (resume) check_checkpoint_world_size(*resume, args.world_size);
  memory.start("train");
  in_train = true;

  SamplerOptions so;
  so.batch_size = args.per_device_train_batch_size;
  so.drop_last = args.dataloader_drop_last;
  so.seed = static_cast<uint64_t>(args.data_seed.value_or(args.seed));
  so.shard = Shard{args.process_index, args.world_size};
  const BatchSampler sampler(train_dataset->size(), so);
  const int64_t len_dataloader = sampler.batches_per_epoch();
  if (len_dataloader == 0) {
    throw std::invalid_argument("train: the train dataset (" + std::to_string(train_dataset->size()) +
                                " samples) gives no batch of per_device_train_batch_size " +
                                std::to_string(args.per_device_train_batch_size) +
                                " with dataloader_drop_last");
  }
  const int64_t accum = args.gradient_accumulation_steps;
  const int64_t total_batch = args.per_device_train_batch_size * accum * args.world_size;
  const int64_t updates_per_epoch =
      std::max<int64_t>(len_dataloader / accum + (len_dataloader % accum > 0 ? 1 : 0), 1);
  int64_t max_steps = 0;
  int64_t num_epochs = 0;
  double num_train_samples = 0;
  if (args.max_steps > 0) {
    max_steps = args.max_steps;
    num_epochs = max_steps / updates_per_epoch + (max_steps % updates_per_epoch > 0 ? 1 : 0);
    num_train_samples = static_cast<double>(max_steps * total_batch);
  } else {
    max_steps =
        static_cast<int64_t>(std::ceil(args.num_train_epochs * static_cast<double>(updates_per_epoch)));
    num_epochs = static_cast<int64_t>(std::ceil(args.num_train_epochs));
    num_train_samples = static_cast<double>(train_dataset->size()) * args.num_train_epochs;
  }

  auto& module = model->module();
  optimizer = make_optimizer(args, module);
  scheduler.emplace(args.lr_scheduler_type, args.learning_rate, warmup_steps_for(args, max_steps), max_steps);
  set_learning_rate(*optimizer, access.lr());

  int64_t epochs_trained = 0;
  int64_t steps_trained_in_current_epoch = 0;
  state = TrainerState{};
  if (resume) {
    spdlog::info("resuming training from {}", resume->string());
    state = load_trainer_state(*resume / kTrainerStateFile);
    handler.load_states(state, control);
    if (state.train_batch_size != 0 && state.train_batch_size != args.per_device_train_batch_size) {
      spdlog::warn(
          "resume: the checkpoint was trained with per_device_train_batch_size {} but this run uses {}",
          state.train_batch_size, args.per_device_train_batch_size);
    }
    load_checkpoint_weights(*resume, module, *optimizer, *scheduler);
    set_learning_rate(*optimizer, access.lr());
    epochs_trained = state.global_step / updates_per_epoch;
    steps_trained_in_current_epoch = (state.global_step % updates_per_epoch) * accum;
  }
  state.max_steps = max_steps;
  state.num_train_epochs = static_cast<double>(num_epochs);
  state.logging_steps = resolve_steps(args.logging_steps, max_steps);
  state.eval_steps = resolve_steps(args.eval_steps.value_or(args.logging_steps), max_steps);
  state.save_steps = resolve_steps(args.save_steps, max_steps);
  state.train_batch_size = args.per_device_train_batch_size;
  state.steps_in_epoch = updates_per_epoch;
  fill_rank_state();

  write_training_args();
  tr_loss = 0;
  total_loss = 0;
  globalstep_last_logged = state.global_step;
  const int64_t start_step = state.global_step;
  std::optional<double> grad_norm;
  std::vector<torch::Tensor> params = module.parameters();
  module.train();
  module.zero_grad();
  const auto start = std::chrono::steady_clock::now();

  host->train_begins();
  fire(TH_EVENT_TRAIN_BEGIN);

  bool restore_rng = resume.has_value();
  for (int64_t epoch = epochs_trained; epoch < num_epochs; ++epoch) {
    const auto batches = sampler.epoch_batches(epoch);
    const auto steps_in_epoch = static_cast<int64_t>(batches.size());
    fire(TH_EVENT_EPOCH_BEGIN);
    const int64_t steps_skipped = steps_trained_in_current_epoch;
    steps_trained_in_current_epoch = 0;
    if (restore_rng) {
      // HF restores the RNG where the interrupted run was: right before the
      // first batch it had not consumed.
      load_rng_state(*resume / (group ? rank_rng_state_file(group->rank()) : std::string(kRngStateFile)));
      restore_rng = false;
    }
    bool any_step = false;
    for (int64_t i = steps_skipped; i < steps_in_epoch; ++i) {
      any_step = true;
      if (i % accum == 0) fire(TH_EVENT_STEP_BEGIN);
      const Batch batch = train_dataset->get(batches[static_cast<size_t>(i)]);
      const auto outputs = model->forward(batch.inputs);
      auto loss = model->loss(outputs, batch.labels);
      if (accum > 1) loss = loss / static_cast<double>(accum);
      const bool sync = (i + 1) % accum == 0 || (i + 1) == steps_in_epoch;
      // Gradients of the window's last micro-step are all-reduced while backward runs.
      if (reducer) reducer->arm(sync);
      loss.backward();
      const double step_loss = loss.item<double>();
      access.add_micro_loss(step_loss);
      if (args.logging_nan_inf_filter && !std::isfinite(step_loss)) {
        tr_loss += tr_loss / static_cast<double>(1 + state.global_step - globalstep_last_logged);
      } else {
        tr_loss += step_loss;
      }
      state.total_flos += 6.0 * static_cast<double>(parameter_count) *
                          static_cast<double>(batch.inputs.size(0) * model->tokens_per_sample(batch.inputs));
      if (sync) {
        if (reduce_gradients) reduce_gradients(*model);
        if (args.max_grad_norm > 0) grad_norm = torch::nn::utils::clip_grad_norm_(params, args.max_grad_norm);
        access.end_window(args.max_grad_norm > 0 ? grad_norm : std::nullopt);
        fire(TH_EVENT_PRE_OPTIMIZER_STEP);
        if (!access.take_skip()) optimizer->step();
        fire(TH_EVENT_OPTIMIZER_STEP);
        scheduler->step();
        set_learning_rate(*optimizer, access.lr());
        optimizer->zero_grad();
        state.global_step += 1;
        state.epoch =
            static_cast<double>(epoch) + static_cast<double>(i + 1) / static_cast<double>(steps_in_epoch);
        fire(TH_EVENT_STEP_END);
        sync_control();
        maybe_log_save_evaluate(grad_norm);
      } else {
        fire(TH_EVENT_SUBSTEP_END);
        sync_control();
      }
      if (control.should_epoch_stop || control.should_training_stop) break;
    }
    if (!any_step) {
      spdlog::warn("epoch {} had no batch left to train on; stopping (global_step {}, max_steps {})", epoch,
                   state.global_step, state.max_steps);
      control.should_training_stop = true;
    }
    fire(TH_EVENT_EPOCH_END);
    sync_control();
    maybe_log_save_evaluate(grad_norm);
    if (control.should_training_stop) break;
  }

  if (args.load_best_model_at_end && state.best_model_checkpoint) {
    spdlog::info("loading the best model from {} (score {})", *state.best_model_checkpoint,
                 state.best_metric.value_or(0.0));
    load_model_weights(module, fs::path(*state.best_model_checkpoint) / kModelFile);
  }
  total_loss += mean_over_ranks(tr_loss);
  tr_loss = 0;
  const int64_t steps_run = state.global_step - start_step;
  const double train_loss = steps_run > 0 ? total_loss / static_cast<double>(steps_run) : 0.0;
  Metrics metrics;
  add_speed_metrics(metrics, "train", seconds_since(start), num_train_samples,
                    static_cast<double>(max_steps));
  metrics["total_flos"] = state.total_flos;
  metrics["train_loss"] = train_loss;
  in_train = false;
  memory.stop_and_update("train", metrics);
  log(metrics);
  if (world_zero() && state.best_model_checkpoint && args.save_total_limit && *args.save_total_limit == 1) {
    for (const auto& dir : sorted_checkpoints(args.output_dir)) {
      std::error_code ec;
      if (!fs::equivalent(dir, *state.best_model_checkpoint, ec)) fs::remove_all(dir, ec);
    }
  }
  fire(TH_EVENT_TRAIN_END);
  return TrainOutput{state.global_step, train_loss, metrics};
}

void Trainer::Impl::maybe_log_save_evaluate(std::optional<double> grad_norm) {
  // The flags are the same on every rank here (sync_control before the call),
  // so `acted` is too, and every rank makes the same collective calls.
  bool acted = false;
  if (control.should_log && state.global_step > globalstep_last_logged) {
    acted = true;
    // HF logs the loss gathered and averaged over processes.
    tr_loss = mean_over_ranks(tr_loss);
    Metrics logs;
    logs["loss"] = round_to(tr_loss / static_cast<double>(state.global_step - globalstep_last_logged), 4);
    if (grad_norm) logs["grad_norm"] = *grad_norm;
    logs["learning_rate"] = access.lr();
    total_loss += tr_loss;
    tr_loss = 0;
    globalstep_last_logged = state.global_step;
    log(logs);
  }
  if (control.should_evaluate) {
    acted = true;
    const Metrics metrics = evaluate(nullptr, "eval");
    const bool new_best = update_best_metric(metrics);
    if (args.save_strategy == SaveStrategy::best) control.should_save = new_best;
  }
  if (control.should_save) {
    acted = true;
    save_checkpoint();
  }
  // on_log / on_evaluate / on_save callbacks may have set flags on one rank only.
  if (acted) sync_control();
}

}  // namespace trainhook
