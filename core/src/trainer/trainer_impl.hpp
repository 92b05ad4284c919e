// Trainer::Impl, private to the library. Its work is split by job, one file each:
//   trainer.cpp            construction, log(), the public face
//   callback_assembly.cpp  the callback list in HF's order (plugins, C++ callbacks, progress)
//   training_loop.cpp      train(): plan the steps, restore, run the epochs, finish
//   train_failure.cpp      train() ending by an error: on_exception
//   evaluation_loop.cpp    evaluate(), predict() and their shared prediction loop
//   checkpointing.cpp      checkpoints, the best metric, resume, model and state files
//   callback_teardown.cpp  the bounded end of the callbacks (destroy, library release)
// What differs with one process or many is behind `data_parallel`
// (distributed/data_parallel.hpp); no file here asks how many processes there are.
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/data/batch_sampler.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/distributed/data_parallel.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/optim/grad_scaler.hpp>
#include <trainhook/optim/lr_schedule.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/plugin_host/selection/callback_resolver.hpp>
#include <trainhook/plugin_host/selection/isolation_policy.hpp>
#include <trainhook/trainer/device_placement.hpp>
#include <trainhook/trainer/eval_prediction.hpp>
#include <trainhook/trainer/memory_metrics.hpp>
#include <trainhook/trainer/output_dir_lock.hpp>
#include <trainhook/trainer/trainer.hpp>
#include <trainhook/trainer/trainer_services.hpp>

#include "debug_underflow_overflow.hpp"
#include "run_profile.hpp"
#include "trainer_model_access.hpp"

#include <torch/optim/optimizer.h>

#include <chrono>
#include <filesystem>
#include <optional>

namespace trainhook {

// Metrics as a borrowed th_values for one event.
class ValuesView {
 public:
  explicit ValuesView(const Metrics& m);
  const th_values* get() const noexcept { return &values_; }

 private:
  std::vector<const char*> keys_;
  std::vector<double> numbers_;
  th_values values_{};
};

// What train() works out before its first step (HF's len_dataloader,
// num_update_steps_per_epoch, max_steps, num_train_epochs, num_train_samples).
struct TrainingPlan {
  BatchSampler sampler;
  int64_t updates_per_epoch = 0;
  int64_t max_steps = 0;
  int64_t num_epochs = 0;
  double num_train_samples = 0;
};

// Where training starts: epoch 0 of a new run, or where a checkpoint stopped.
struct StartPoint {
  int64_t epoch = 0;
  int64_t micro_steps_done = 0;                     // batches of `epoch` already trained on (skipped)
  std::optional<std::filesystem::path> checkpoint;  // its RNG state is restored before the next batch
  // The checkpoint was saved at the last step of an epoch, before that epoch's
  // end (its evaluation) ran: resume_epoch_end.cpp runs it first.
  bool epoch_end_pending = false;
};

struct Trainer::Impl {
  Impl(std::shared_ptr<Model> model, TrainingArguments args, std::shared_ptr<TensorDataset> train,
       std::shared_ptr<TensorDataset> eval, TrainerOptions options);

  // trainer.cpp
  void fire(EventId event, const EventPayload& payload = {});
  void log(const Metrics& logs);
  void fill_rank_state();
  bool world_zero() const noexcept { return state.is_world_process_zero; }

  // callback_assembly.cpp
  void assemble_callbacks(TrainerOptions& options);
  void add_plugin_callbacks(const PluginSearchOptions& search);
  void add_progress_callback();
  std::unique_ptr<detail::InternalCallback> create_plugin_callback(const std::string& name);

  // train_failure.cpp: run_training(), and on_exception once when it throws.
  TrainOutput train(std::optional<std::string> resume);
  void fire_exception(const std::exception_ptr& error) noexcept;
  // training_loop.cpp
  TrainOutput run_training(std::optional<std::string> resume);
  TrainingPlan plan_steps() const;
  StartPoint restore(const std::filesystem::path& checkpoint, const TrainingPlan& plan);
  void begin_training(const TrainingPlan& plan);
  void run_epoch(const TrainingPlan& plan, int64_t epoch, const StartPoint& start);
  // One micro-step on a batch the prefetcher built (data/batch_prefetcher.hpp).
  void training_step(const Batch& host_batch, int64_t epoch, int64_t step, int64_t steps_in_epoch);
  void optimizer_step(double epoch);
  // `already_complete`: the run resumed at or past its end and trained nothing.
  TrainOutput finish_training(const TrainingPlan& plan, int64_t start_step,
                              std::chrono::steady_clock::time_point start, bool already_complete);
  // The restored checkpoint is at or past max_steps (agreed over the ranks); says so once.
  bool already_complete(const std::filesystem::path& checkpoint, const TrainingPlan& plan);
  void maybe_log_save_evaluate();
  // The ranks agree on the TrainerControl flags (timed under --profile).
  void agree_on_control();

  // resume_epoch_end.cpp
  bool epoch_end_pending_after(const TrainingPlan& plan) const;
  void run_pending_epoch_end();

  // train_end.cpp: before_train_end, then on_train_end bounded by callback_end_timeout.
  void end_training(const TrainOutput& output);
  // callback_teardown.cpp: every callback destroyed and the registry released,
  // each bounded by callback_end_timeout (past it: named, std::_Exit(exit_status)).
  void end_callbacks(int exit_status);

  // evaluation_loop.cpp
  Metrics evaluate(const std::shared_ptr<TensorDataset>& dataset, const std::string& prefix);
  PredictionOutput predict(const std::shared_ptr<TensorDataset>& dataset, const std::string& prefix);
  // The shared evaluation/prediction pass: <prefix>_loss, compute_metrics and
  // speed metrics; kind 0 = evaluate, 1 = predict (for on_prediction_step).
  PredictionOutput prediction_loop(const TensorDataset& dataset, const std::string& prefix, int32_t kind);

  // checkpointing.cpp
  bool update_best_metric(const Metrics& metrics);
  void save_checkpoint();
  std::optional<std::filesystem::path> resolve_resume(std::optional<std::string> resume);
  void write_training_args() const;

  TrainingArguments args;
  // World rank 0's lock on output_dir (output_dir_lock.hpp), taken in the
  // constructor unless the arguments only evaluate or predict; declared early
  // so it is released after the callbacks (which may write there when destroyed).
  std::shared_ptr<OutputDirLock> output_dir_lock;
  // True while train() runs: the callback list may not change then (trainer_callbacks.cpp).
  bool in_train = false;
  double step_learning_rate = 0;  // the rate of the last optimizer step (logged as learning_rate)
  std::shared_ptr<Model> model;
  // Where the model, its optimizer state and the batches live; the autocast dtype of --bf16/--fp16.
  c10::Device device{c10::DeviceType::CPU};
  std::optional<c10::ScalarType> autocast;
  // --fp16's loss scaling (disabled otherwise): scales backward, unscales before clipping, skips overflowed
  // steps.
  GradScaler scaler{false};
  std::shared_ptr<TensorDataset> train_dataset;
  std::shared_ptr<TensorDataset> eval_dataset;
  ComputeMetricsFn compute_metrics;
  std::function<void(const std::filesystem::path&)> on_checkpoint_file;
  std::string model_config_json;  // TrainerOptions::model_config_json
  std::function<void(const TrainOutput&)> before_train_end;
  std::string args_json;
  // One process or many (set in the constructor; never null after it).
  std::unique_ptr<distributed::DataParallel> data_parallel;

  TrainerState state;
  TrainerControl control;
  MemoryTracker memory;
  // Destruction order matters: handler (callbacks) first, then the services
  // they call, then the registry (libraries stay loaded while a callback lives).
  std::optional<PluginRegistry> registry;
  CallbackSelection selection;  // what report_to/callbacks enable (callback_resolver.hpp)
  // Which plugin callbacks run isolated, decided at setup (isolation_policy.hpp).
  std::optional<IsolationPolicy> isolation;
  // ABI 1.1 model services (model_access.hpp), reading members declared below.
  TrainerModelAccess access{{handler, model, optimizer, scheduler}};
  std::unique_ptr<TrainerServices> services;
  // --profile (run_profile.hpp): declared before the handler, which times
  // every callback call into it.
  RunProfile profile{args.profile};
  CallbackHandler handler;

  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<LrScheduler> scheduler;
  int64_t parameter_count = 0;
  UnderflowOverflowDetector underflow_overflow;  // --debug underflow_overflow (health)

  // Training-loop bookkeeping (HF's tr_loss, _total_loss_scalar,
  // _globalstep_last_logged, grad_norm).
  double tr_loss = 0;
  double total_loss = 0;
  int64_t globalstep_last_logged = 0;
  double tokens_this_run = 0;  // --include_tokens_per_second: input tokens over all ranks since train()
  std::optional<double> grad_norm;
  std::vector<torch::Tensor> trained_parameters;  // clipped on every optimizer step
};

double seconds_since(std::chrono::steady_clock::time_point start);
// HF speed_metrics: <split>_runtime, _samples_per_second, _steps_per_second.
void add_speed_metrics(Metrics& m, const std::string& split, double runtime, double samples,
                       std::optional<double> steps);
double round_to(double v, int digits);

}  // namespace trainhook
