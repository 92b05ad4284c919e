// Trainer::Impl, shared by trainer.cpp (setup, log, evaluate, predict, save)
// and training_loop.cpp (train()). Private to the library.
#pragma once

#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/distributed/process_group.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/plugin_host/plugin_registry.hpp>
#include <trainhook/trainer/eval_prediction.hpp>
#include <trainhook/trainer/lr_schedule.hpp>
#include <trainhook/trainer/memory_metrics.hpp>
#include <trainhook/trainer/trainer.hpp>
#include <trainhook/trainer/trainer_host.hpp>

#include "model_access.hpp"

#include <torch/optim/optimizer.h>

#include <chrono>
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

struct Trainer::Impl {
  Impl(std::shared_ptr<Model> model, TrainingArguments args, std::shared_ptr<TensorDataset> train,
       std::shared_ptr<TensorDataset> eval, TrainerOptions options);

  void fire(EventId event, const EventPayload& payload = {});
  void log(const Metrics& logs);
  Metrics evaluate(const std::shared_ptr<TensorDataset>& dataset, const std::string& prefix);
  PredictionOutput predict(const std::shared_ptr<TensorDataset>& dataset, const std::string& prefix);
  // The shared evaluation/prediction pass: <prefix>_loss, compute_metrics and
  // speed metrics; kind 0 = evaluate, 1 = predict (for on_prediction_step).
  PredictionOutput prediction_loop(const TensorDataset& dataset, const std::string& prefix, int32_t kind);
  TrainOutput train(std::optional<std::string> resume);
  void maybe_log_save_evaluate(std::optional<double> grad_norm);
  bool update_best_metric(const Metrics& metrics);
  void save_checkpoint();
  std::optional<std::filesystem::path> resolve_resume(std::optional<std::string> resume);
  void write_training_args() const;
  bool world_zero() const noexcept { return state.is_world_process_zero; }
  // Multi-process agreement (no-ops without a group): TrainerControl flags
  // OR-ed over ranks, a number averaged over ranks.
  void sync_control();
  double mean_over_ranks(double v);
  void fill_rank_state();

  TrainingArguments args;
  std::shared_ptr<Model> model;
  std::shared_ptr<TensorDataset> train_dataset;
  std::shared_ptr<TensorDataset> eval_dataset;
  ComputeMetricsFn compute_metrics;
  std::function<void(Model&)> reduce_gradients;
  std::shared_ptr<distributed::ProcessGroup> group;
  // The default reduce_gradients of a multi-process run (overlaps with backward).
  std::shared_ptr<distributed::GradientReducer> reducer;
  std::function<void(const std::filesystem::path&)> on_checkpoint_file;
  bool print_metrics = false;
  std::string args_json;

  TrainerState state;
  TrainerControl control;
  MemoryTracker memory;
  // Destruction order matters: handler (callbacks) first, then the host they
  // call, then the registry (libraries stay loaded while a callback lives).
  std::optional<PluginRegistry> registry;
  TrainerModelAccess access{*this};  // ABI 1.1 model services (model_access.hpp)
  std::unique_ptr<TrainerHost> host;
  CallbackHandler handler;

  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::optional<LrScheduler> scheduler;
  int64_t parameter_count = 0;

  // Training-loop bookkeeping (HF's tr_loss, _globalstep_last_logged, ...).
  double tr_loss = 0;
  double total_loss = 0;
  int64_t globalstep_last_logged = 0;
  bool in_train = false;
};

double seconds_since(std::chrono::steady_clock::time_point start);
// HF speed_metrics: <split>_runtime, _samples_per_second, _steps_per_second.
void add_speed_metrics(Metrics& m, const std::string& split, double runtime, double samples,
                       std::optional<double> steps);
double round_to(double v, int digits);

}  // namespace trainhook
