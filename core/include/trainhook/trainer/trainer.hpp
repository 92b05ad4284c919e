// The Trainer: HF's Trainer on LibTorch. It trains a Model on a TensorDataset
// with TrainingArguments, calling callbacks (the core's DefaultFlowCallback,
// report_to integrations and `callbacks` from plugins, the C++ callbacks given
// here, and the progress/printer plugin) at every event in HF's order.
//
// This header needs no LibTorch: Model, TensorDataset, EvalPrediction and
// PredictionOutput are complete in models/model.hpp, data/tensor_dataset.hpp
// and trainer/eval_prediction.hpp.
//
// Ownership: the Trainer shares the model and datasets with the caller, owns
// its callbacks (destroyed before plugin libraries are unloaded) and the host
// services table plugins call back into.
#pragma once

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/callbacks/callback.hpp>
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/callbacks/popped_callback.hpp>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/distributed/gradient_reduction.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/trainer/metrics_io.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

class Model;
class TensorDataset;
namespace distributed {
class ProcessGroup;
}
struct EvalPrediction;
struct PredictionOutput;

using ComputeMetricsFn = std::function<Metrics(const EvalPrediction&)>;
struct TrainOutput;

// Accuracy of argmax(predictions, -1) against label_ids, for classification and
// language modelling alike: {"accuracy": fraction}. The CLI's compute_metrics.
Metrics accuracy_metrics(const EvalPrediction& p);

struct TrainerOptions {
  // Extra C++ callbacks (trainhook::Callback, the plugin authors' class; see
  // make_callback in callback.hpp), called after the plugin `callbacks` in this order.
  std::vector<NamedCallback> callbacks;
  // Metrics from predictions and labels (names get the eval_/test_ prefix).
  ComputeMetricsFn compute_metrics;
  // Load report_to/`callbacks`/progress plugins. Off: only C++ callbacks run.
  bool use_plugins = true;
  // Where plugins are searched; plugin_dirs from the arguments come first.
  PluginSearchOptions plugin_search;
  // Replaces the averaging of gradients across processes: called on every
  // optimizer step before clipping (the last micro-step of an accumulation
  // window), with one process too. Empty: one process does nothing; several
  // average over the process group as gradient_reduction says.
  std::function<void(Model&)> reduce_gradients;
  // How several processes average gradients: DDP's buckets all-reduced while
  // backward runs (the default), or after backward (bench/ddp's comparison point).
  distributed::GradientReduction gradient_reduction = distributed::GradientReduction::overlap_with_backward;
  // The multi-process group (world_size > 1). Empty with args.world_size > 1:
  // the Trainer joins one from the launcher's environment (torchrun's RANK,
  // WORLD_SIZE, MASTER_ADDR, ...; see distributed/launch_env.hpp).
  std::shared_ptr<distributed::ProcessGroup> process_group;
  // Called after each file of a checkpoint is written (tests inject crashes
  // here; a throw aborts the save and leaves earlier checkpoints intact).
  std::function<void(const std::filesystem::path& file)> on_checkpoint_file;
  // The arguments the model was built from, as a JSON object (HF's config.json;
  // the CLI gives its --model, --hidden_size, ...). Written as config.json into
  // every checkpoint and the final save; a checkpoint or model folder whose
  // config.json differs is refused on resume or load_model, naming each key.
  // Empty: nothing is written or checked (an embedding program's own model).
  std::string model_config_json;
  // Called on every rank at the end of train(), after the train metrics are
  // logged and right before on_train_end: the place to save the final model
  // and train results (the CLI does), so that a callback that hangs, runs over
  // --callback_end_timeout or calls exit() in on_train_end cannot lose them.
  // HF's scripts save them after train() returns.
  std::function<void(const TrainOutput& output)> before_train_end;
};

struct TrainOutput {
  int64_t global_step = 0;
  double training_loss = 0;
  Metrics metrics;
  // The run resumed from a checkpoint at or past its end (max_steps, or its
  // last epoch): it trained no step. The final model and results already in
  // output_dir are the run's; the CLI keeps them and writes only what is missing.
  bool already_complete = false;
};

class Trainer {
 public:
  // Validates `args` (HF rules), sets the seed, builds the callback list and
  // fires on_init_end. Throws ArgumentError/PluginError/std::runtime_error.
  Trainer(std::shared_ptr<Model> model, TrainingArguments args,
          std::shared_ptr<TensorDataset> train_dataset = nullptr,
          std::shared_ptr<TensorDataset> eval_dataset = nullptr, TrainerOptions options = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // resume: a checkpoint folder, "true" = the latest in output_dir; nullopt =
  // args.resume_from_checkpoint (or what a plugin set through the host).
  TrainOutput train(std::optional<std::string> resume_from_checkpoint = std::nullopt);
  // Evaluation on eval_dataset (or `dataset`): <prefix>_loss, compute_metrics,
  // <prefix>_runtime/_samples_per_second/_steps_per_second; logged, then on_evaluate.
  Metrics evaluate(std::shared_ptr<TensorDataset> dataset = nullptr, const std::string& prefix = "eval");
  // Predictions (concatenated outputs) with metrics; on_predict, no log.
  PredictionOutput predict(std::shared_ptr<TensorDataset> dataset, const std::string& prefix = "test");
  // predict() for callers without LibTorch: the metrics, and when
  // `predictions_file` is given, "index<TAB>prediction" lines (argmax of the
  // last output dimension; a sequence gives space-separated ids).
  Metrics predict_metrics(std::shared_ptr<TensorDataset> dataset, const std::string& prefix = "test",
                          const std::optional<std::filesystem::path>& predictions_file = std::nullopt);

  // HF Trainer.log: adds epoch, appends {logs, step} to log_history, fires on_log.
  void log(const Metrics& logs);
  void log_metrics(const std::string& split, const Metrics& metrics) const;
  void save_metrics(const std::string& split, const Metrics& metrics, bool combined = true) const;
  // Model weights (model.pt) and training_args.json into `dir` (default output_dir).
  void save_model(const std::optional<std::filesystem::path>& dir = std::nullopt);
  // Loads model weights from a checkpoint folder or a model.pt file.
  void load_model(const std::filesystem::path& path);
  // HF save_state: output_dir/trainer_state.json (world zero only).
  void save_state() const;

  const TrainerState& state() const noexcept;
  const TrainingArguments& args() const noexcept;
  Model& model() noexcept;
  CallbackHandler& callback_handler() noexcept;

  // HF's callback list management (callback_list.cpp), before train() and
  // between train()/evaluate() calls; the order of the others is kept. Adding
  // puts the callback last; a name already in the list is an error (names key
  // the saved callback states). By name: "DefaultFlowCallback" or a plugin
  // callback (found and configured as `callbacks` are; needs use_plugins).
  // Without DefaultFlowCallback nothing is logged, evaluated or saved at
  // step/epoch intervals, as in HF; without the progress plugin nothing is shown.
  void add_callback(NamedCallback callback);
  void add_callback(const std::string& name);
  void add_callback(PoppedCallback callback);
  // The callback named `name` / the embedder's `instance`, taken out; nullopt when absent.
  std::optional<PoppedCallback> pop_callback(const std::string& name);
  std::optional<PoppedCallback> pop_callback(const Callback& instance);
  // As pop_callback, the callback destroyed; nothing happens when it is absent.
  void remove_callback(const std::string& name);
  void remove_callback(const Callback& instance);
  // The names in calling order.
  std::vector<std::string> callback_names() const;
  // Ends every callback (each plugin's destroy(), an isolated one's helper
  // process), last added first, and lets go of the plugin libraries (loaded
  // with RTLD_NODELETE: their destructors run in exit()). Each callback gets
  // --callback_end_timeout seconds (0: no bound); one still in its destroy()
  // past the bound (or when a SIGINT/SIGTERM arrives meanwhile) is named
  // ("plugin 'x' (file) did not finish destroy within --callback_end_timeout
  // N s; ...") and the process ends there with `exit_status` (std::_Exit: no
  // destructors run; the output_dir lock goes with the process), since the
  // plugin still runs on the helper thread. The Trainer has no callbacks
  // afterwards. `trainhook train` calls it at the end of every run it
  // started; without it the destructor destroys them, unbounded.
  void end_callbacks(int exit_status);
  // The host table plugins receive (also usable by C++ callbacks).
  HostServices& host() noexcept;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainhook
