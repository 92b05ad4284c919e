// Trainer::train(): HF's _inner_training_loop, event for event (the event
// order of the Hugging Face Trainer, transformers trainer.py), in its phases:
// plan the steps, restore a checkpoint, begin, run the epochs, finish. The
// loop reads the same with one process or many: what differs is behind
// `data_parallel`.
#include "trainer_impl.hpp"

#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/data/batch_prefetcher.hpp>
#include <trainhook/optim/grad_clipping.hpp>
#include <trainhook/optim/optimizer_factory.hpp>
#include <trainhook/trainer/training_loss.hpp>

#include <trainhook/checkpoint/resume_compatibility.hpp>
#include <trainhook/trainer/options_from_arguments.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include <spdlog/spdlog.h>

#include <cmath>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {

TrainOutput Trainer::Impl::run_training(std::optional<std::string> resume_arg) {
  if (!train_dataset) throw std::invalid_argument("train: the Trainer has no train_dataset");
  // The callback list may not change while train() dispatches events (trainer_callbacks.cpp).
  in_train = true;
  struct TrainingFlag {
    bool& flag;
    ~TrainingFlag() { flag = false; }
  } training_flag{in_train};
  const auto resume = resolve_resume(std::move(resume_arg));
  if (resume) check_checkpoint_world_size(*resume, args.world_size);
  memory.start("train");
  const TrainingPlan plan = plan_steps();
  optimizer = make_optimizer(optimizer_options(args), model->module());
  scheduler.emplace(schedule_options(args), plan.max_steps);
  set_learning_rate(*optimizer, access.lr());
  state = TrainerState{};
  const StartPoint start = resume ? restore(*resume, plan) : StartPoint{};
  // A checkpoint at or past the end (a job restarted after its final save):
  // no step is trained and no checkpoint written, so a scheduler's retry
  // returns the weights the run ended with. Every rank restored the same
  // checkpoint; they agree before anything collective depends on it.
  const bool complete = resume && already_complete(*resume, plan);
  begin_training(plan);
  const int64_t start_step = state.global_step;
  const auto start_time = std::chrono::steady_clock::now();
  profile.start();
  services->train_begins();
  fire(TH_EVENT_TRAIN_BEGIN);
  // HF's eval_on_start: a sanity-check evaluation before the first step; the
  // dataset is passed so a metric-driven schedule does not step on it.
  if (args.eval_on_start && !complete) {
    if (!eval_dataset) throw std::invalid_argument("--eval_on_start: the Trainer has no evaluation dataset");
    evaluate(eval_dataset, "eval");
  }
  if (start.epoch_end_pending) run_pending_epoch_end();  // its evaluation is not lost
  for (int64_t epoch = start.epoch; epoch < plan.num_epochs && !complete; ++epoch) {
    // Only the first epoch run skips batches and restores the RNG.
    run_epoch(plan, epoch, epoch == start.epoch ? start : StartPoint{epoch, 0, std::nullopt});
    if (control.should_training_stop) break;
  }
  return finish_training(plan, start_step, start_time, complete);
}

bool Trainer::Impl::already_complete(const fs::path& checkpoint, const TrainingPlan& plan) {
  const bool here = state.global_step >= plan.max_steps;
  const double ranks_complete = data_parallel->world_size() > 1
                                    ? data_parallel->sum_over_ranks(here ? 1.0 : 0.0, "resume: run complete")
                                    : (here ? 1.0 : 0.0);
  if (ranks_complete != 0 && ranks_complete != static_cast<double>(data_parallel->world_size())) {
    throw std::runtime_error(
        "resume: the ranks disagree on whether the run is complete (" +
        std::to_string(static_cast<int64_t>(ranks_complete)) + " of " +
        std::to_string(data_parallel->world_size()) + " restored a checkpoint at or past " + "max_steps " +
        std::to_string(plan.max_steps) + "; this rank restored " + checkpoint.string() + " at step " +
        std::to_string(state.global_step) + "): give every rank the same --resume_from_checkpoint");
  }
  if (!here) return false;
  spdlog::info(
      "the run was already complete: {} is at step {} of {} (max_steps); no step is trained, no checkpoint "
      "written, and the final model in {} is kept as it is (written only if it is missing)",
      checkpoint.string(), state.global_step, plan.max_steps, args.output_dir);
  return true;
}

TrainingPlan Trainer::Impl::plan_steps() const {
  SamplerOptions so;
  so.batch_size = args.per_device_train_batch_size;
  so.drop_last = args.dataloader_drop_last;
  so.seed = static_cast<uint64_t>(args.data_seed.value_or(args.seed));
  so.shard = Shard{data_parallel->rank(), data_parallel->world_size()};
  const bool stream = train_dataset->epochless();
  if (stream) {
    // Windows drawn at random from a token stream: no epoch to count in.
    if (args.max_steps <= 0) {
      throw std::invalid_argument("train: " + train_dataset->description() +
                                  " is a token stream (random windows, no epochs): set --max_steps; "
                                  "--num_train_epochs does not apply to it");
    }
    so.stream_batches = args.max_steps * args.gradient_accumulation_steps;
  }
  if (args.group_by_length) {
    const auto lengths = train_dataset->column(args.length_column_name);
    if (!lengths.defined() || lengths.numel() != train_dataset->size()) {
      std::string names;
      for (const auto& n : train_dataset->names()) names += (names.empty() ? "" : ", ") + n;
      throw std::invalid_argument("--group_by_length: the training data has no one-per-sample tensor '" +
                                  args.length_column_name + "' (--length_column_name; it has: " + names +
                                  ")");
    }
    so.lengths = lengths.reshape({-1});
  }
  TrainingPlan plan{BatchSampler(train_dataset->size(), so)};
  const int64_t len_dataloader = plan.sampler.batches_per_epoch();
  if (len_dataloader == 0) {
    throw std::invalid_argument("train: the train dataset (" + std::to_string(train_dataset->size()) +
                                " samples) gives no batch of per_device_train_batch_size " +
                                std::to_string(args.per_device_train_batch_size) +
                                " with dataloader_drop_last");
  }
  const int64_t accum = args.gradient_accumulation_steps;
  const int64_t total_batch = args.per_device_train_batch_size * accum * args.world_size;
  plan.updates_per_epoch =
      std::max<int64_t>(len_dataloader / accum + (len_dataloader % accum > 0 ? 1 : 0), 1);
  if (stream) {
    plan.max_steps = args.max_steps;
    plan.num_epochs = 1;
    plan.num_train_samples = static_cast<double>(plan.max_steps * total_batch);
  } else if (args.max_steps > 0) {
    plan.max_steps = args.max_steps;
    plan.num_epochs =
        plan.max_steps / plan.updates_per_epoch + (plan.max_steps % plan.updates_per_epoch > 0 ? 1 : 0);
    plan.num_train_samples = static_cast<double>(plan.max_steps * total_batch);
  } else {
    plan.max_steps =
        static_cast<int64_t>(std::ceil(args.num_train_epochs * static_cast<double>(plan.updates_per_epoch)));
    plan.num_epochs = static_cast<int64_t>(std::ceil(args.num_train_epochs));
    plan.num_train_samples = static_cast<double>(train_dataset->size()) * args.num_train_epochs;
  }
  return plan;
}

StartPoint Trainer::Impl::restore(const fs::path& checkpoint, const TrainingPlan& plan) {
  spdlog::info("resuming training from {}", checkpoint.string());
  state = load_trainer_state(checkpoint / kTrainerStateFile);
  handler.load_states(state, control);
  if (state.train_batch_size != 0 && state.train_batch_size != args.per_device_train_batch_size) {
    spdlog::warn(
        "resume: the checkpoint was trained with per_device_train_batch_size {} but this run uses {}",
        state.train_batch_size, args.per_device_train_batch_size);
  }
  check_model_config(checkpoint, model_config_json);  // before any tensor: names the arguments
  load_checkpoint_weights(checkpoint, model->module(), *optimizer, *scheduler, &scaler);
  set_learning_rate(*optimizer, access.lr());
  return StartPoint{state.global_step / plan.updates_per_epoch,
                    (state.global_step % plan.updates_per_epoch) * args.gradient_accumulation_steps,
                    checkpoint, epoch_end_pending_after(plan)};
}

void Trainer::Impl::begin_training(const TrainingPlan& plan) {
  state.max_steps = plan.max_steps;
  state.num_train_epochs = static_cast<double>(plan.num_epochs);
  state.logging_steps = resolve_steps(args.logging_steps, plan.max_steps);
  // validate() (args/) gives eval_steps its default, logging_steps, when evaluation
  // runs by steps; otherwise the state keeps TrainerState's own, as HF's compute_steps does.
  if (args.eval_steps) state.eval_steps = resolve_steps(*args.eval_steps, plan.max_steps);
  state.save_steps = resolve_steps(args.save_steps, plan.max_steps);
  state.train_batch_size = args.per_device_train_batch_size;
  state.steps_in_epoch = plan.updates_per_epoch;
  if (args.dataloader_pin_memory && args.dataloader_num_workers > 0 && !device.is_cuda()) {
    // As torch's DataLoader warns: pinning needs an accelerator.
    spdlog::warn("dataloader_pin_memory is set but training runs on the CPU: batches are not pinned");
  }
  fill_rank_state();
  write_training_args();
  tr_loss = 0;
  total_loss = 0;
  globalstep_last_logged = state.global_step;
  tokens_this_run = 0;
  grad_norm.reset();
  auto& module = model->module();
  trained_parameters = module.parameters();
  module.train();
  module.zero_grad();
}

void Trainer::Impl::run_epoch(const TrainingPlan& plan, int64_t epoch, const StartPoint& start) {
  const auto batches = plan.sampler.epoch_batches(epoch);
  const auto steps_in_epoch = static_cast<int64_t>(batches.size());
  fire(TH_EVENT_EPOCH_BEGIN);
  // HF restores the RNG where the interrupted run was: right before the first
  // batch it had not consumed.
  if (start.checkpoint) load_rng_state(*start.checkpoint / data_parallel->rng_state_file());
  bool any_step = false;
  // Workers build the batches ahead (HF: prefetch_factor batches per worker);
  // pinned for a CUDA copy. The batches do not depend on the worker count.
  const int64_t workers = args.dataloader_num_workers;
  const bool pin = args.dataloader_pin_memory && device.is_cuda();
  BatchPrefetcher prefetcher(*train_dataset, batches, start.micro_steps_done, workers,
                             workers * args.dataloader_prefetch_factor.value_or(2),
                             pin ? std::function<void(Batch&)>([](Batch& b) {
                               b.inputs = b.inputs.pin_memory();
                               b.labels = b.labels.pin_memory();
                               for (auto& e : b.extra) e.second = e.second.pin_memory();
                             })
                                 : std::function<void(Batch&)>());
  const RunProfile::Actions& timed = profile.actions();
  for (int64_t i = start.micro_steps_done; i < steps_in_epoch; ++i) {
    any_step = true;
    Batch host_batch = [&] {
      const ProfileScope data(profile.get(), timed.get_train_batch);
      return prefetcher.take(i);
    }();
    const ProfileScope step_scope(profile.get(), timed.training_step);
    training_step(host_batch, epoch, i, steps_in_epoch);
    if (control.should_epoch_stop || control.should_training_stop) break;
  }
  if (!any_step) {
    spdlog::warn("epoch {} had no batch left to train on; stopping (global_step {}, max_steps {})", epoch,
                 state.global_step, state.max_steps);
    control.should_training_stop = true;
  }
  fire(TH_EVENT_EPOCH_END);
  agree_on_control();
  maybe_log_save_evaluate();
}

// One micro-step: forward and backward of batch `step` of the epoch; on the
// last micro-step of an accumulation window, the optimizer step.
void Trainer::Impl::training_step(const Batch& host_batch, int64_t epoch, int64_t step,
                                  int64_t steps_in_epoch) {
  const int64_t accum = args.gradient_accumulation_steps;
  const RunProfile::Actions& timed = profile.actions();
  if (step % accum == 0) fire(TH_EVENT_STEP_BEGIN);
  const Batch batch = to_device(host_batch, device);
  torch::Tensor loss;
  {
    const ProfileScope forward(profile.get(), timed.forward);
    const AutocastScope mixed_precision(device.type(), autocast);  // forward and loss; backward outside
    loss = forward_with_loss(*model, batch, args.label_smoothing_factor).loss;
  }
  if (args.include_num_input_tokens_seen || args.include_tokens_per_second) {
    // One sum over ranks serves both counts.
    const double tokens = data_parallel->sum_over_ranks(
        static_cast<double>(input_tokens(*model, batch.inputs)), "num_input_tokens_seen");
    if (args.include_num_input_tokens_seen) state.num_input_tokens_seen += static_cast<int64_t>(tokens);
    tokens_this_run += tokens;
  }
  if (accum > 1) loss = loss / static_cast<double>(accum);
  const bool accumulation_boundary = (step + 1) % accum == 0 || (step + 1) == steps_in_epoch;
  data_parallel->before_backward(accumulation_boundary);
  double step_loss = 0;
  {
    // With the overlapping reducer, backward also starts the buckets' all-reduces.
    const ProfileScope backward(profile.get(), timed.backward);
    scaler.scale(loss).backward();  // --fp16: scaled so float16 gradients do not underflow
    step_loss = loss.item<double>();
  }
  access.add_micro_loss(step_loss);
  if (args.logging_nan_inf_filter && !std::isfinite(step_loss)) {
    tr_loss += tr_loss / static_cast<double>(1 + state.global_step - globalstep_last_logged);
  } else {
    tr_loss += step_loss;
  }
  state.total_flos += 6.0 * static_cast<double>(parameter_count) *
                      static_cast<double>(batch.inputs.size(0) * model->tokens_per_sample(batch.inputs));
  if (accumulation_boundary) {
    optimizer_step(static_cast<double>(epoch) +
                   static_cast<double>(step + 1) / static_cast<double>(steps_in_epoch));
  } else {
    fire(TH_EVENT_SUBSTEP_END);
    agree_on_control();
  }
}

// `epoch`: the fractional epoch reached by this step (TrainerState.epoch).
void Trainer::Impl::optimizer_step(double epoch) {
  const RunProfile::Actions& timed = profile.actions();
  {
    const ProfileScope reduce(profile.get(), timed.gradient_reduction);
    data_parallel->reduce_gradients();
  }
  // --fp16: true gradients before anything reads them (debug, clipping, plugins' views).
  const bool overflow = scaler.unscale(trained_parameters);
  underflow_overflow.check(args, state.global_step + 1, access.window_loss(), model->module());
  if (args.max_grad_norm > 0) grad_norm = clip_grad_norm(trained_parameters, args.max_grad_norm);
  access.end_window(args.max_grad_norm > 0 ? grad_norm : std::nullopt);
  fire(TH_EVENT_PRE_OPTIMIZER_STEP);
  const bool skipped_by_plugin = access.take_skip();
  if (!skipped_by_plugin && !overflow) {
    const ProfileScope optimizer_scope(profile.get(), timed.optimizer_step);
    optimizer->step();
  }
  fire(TH_EVENT_OPTIMIZER_STEP);
  // The newest transformers logs the rate this step used (before the scheduler's step).
  step_learning_rate = access.lr();
  // As accelerate: a step skipped for an fp16 overflow does not advance the schedule.
  if (!overflow) scheduler->step();
  scaler.update(overflow);
  set_learning_rate(*optimizer, access.lr());
  optimizer->zero_grad();
  state.global_step += 1;
  state.epoch = epoch;
  fire(TH_EVENT_STEP_END);
  apply_stop_signal(control);  // SIGTERM/SIGINT: checkpoint and stop (agreed over ranks below)
  agree_on_control();
  maybe_log_save_evaluate();
}

TrainOutput Trainer::Impl::finish_training(const TrainingPlan& plan, int64_t start_step,
                                           std::chrono::steady_clock::time_point start,
                                           bool already_complete) {
  if (args.load_best_model_at_end && state.best_model_checkpoint) {
    spdlog::info("loading the best model from {} (score {})", *state.best_model_checkpoint,
                 state.best_metric.value_or(0.0));
    // A best checkpoint that moved away: a warning, and the last weights are kept.
    load_best_model_or_keep(model->module(), fs::path(*state.best_model_checkpoint));
  }
  total_loss += data_parallel->mean_over_ranks(tr_loss);
  tr_loss = 0;
  const int64_t steps_run = state.global_step - start_step;
  const double train_loss = steps_run > 0 ? total_loss / static_cast<double>(steps_run) : 0.0;
  Metrics metrics;
  const double runtime = seconds_since(start);
  add_speed_metrics(metrics, "train", runtime, plan.num_train_samples, static_cast<double>(plan.max_steps));
  if (args.include_tokens_per_second)
    metrics["train_tokens_per_second"] = round_to(tokens_this_run / runtime, 3);
  metrics["total_flos"] = state.total_flos;
  metrics["train_loss"] = train_loss;
  memory.stop_and_update("train", metrics);
  log(metrics);
  // save_total_limit 1 with a best model: only the best checkpoint is kept.
  if (world_zero() && state.best_model_checkpoint && args.save_total_limit && *args.save_total_limit == 1) {
    for (const auto& dir : sorted_checkpoints(args.output_dir)) {
      std::error_code ec;
      if (!fs::equivalent(dir, *state.best_model_checkpoint, ec)) fs::remove_all(dir, ec);
    }
  }
  TrainOutput output{state.global_step, train_loss, metrics, already_complete};
  end_training(output);  // the final save first, then a bounded on_train_end
  // Every rank: the parts are gathered; rank 0 writes profile.json (and trace.json).
  profile.finish(*data_parallel, args.output_dir);
  return output;
}

void Trainer::Impl::agree_on_control() {
  const ProfileScope agree(profile.get(), profile.actions().agree_on_control);
  data_parallel->agree_on_control(control);
}

void Trainer::Impl::maybe_log_save_evaluate() {
  // The flags are the same on every rank here (agree_on_control() before the
  // call), so `acted` is too, and every rank makes the same collective calls.
  bool acted = false;
  if (control.should_log && state.global_step > globalstep_last_logged) {
    acted = true;
    // HF logs the loss gathered and averaged over processes.
    tr_loss = data_parallel->mean_over_ranks(tr_loss);
    Metrics logs;
    // In full, as the newest transformers logs it (4.x rounded to 4 decimals).
    logs["loss"] = tr_loss / static_cast<double>(state.global_step - globalstep_last_logged);
    if (grad_norm) logs["grad_norm"] = *grad_norm;
    logs["learning_rate"] = step_learning_rate;
    // --fp16: optimizer steps skipped for inf/NaN gradients so far, and the loss scale now.
    if (scaler.enabled()) {
      logs["skipped_steps"] = static_cast<double>(scaler.skipped_steps());
      logs["loss_scale"] = scaler.current_scale();
    }
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
  if (acted) agree_on_control();
}

}  // namespace trainhook
