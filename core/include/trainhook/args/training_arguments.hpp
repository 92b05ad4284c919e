// TrainingArguments with the Hugging Face names, meanings and defaults, plus the
// model/data arguments of the CLI and the plugin options. No LibTorch here.
//
// Parsing (flags, --config JSON/YAML, --args_file) and validation live in
// argument_parser.hpp; this header is the plain data every part of the core and,
// as JSON, every plugin sees.
#pragma once

#include <trainhook/args/strategies.hpp>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// optim's default, HF's rule: adamw_torch_fused where torch is 2.8 or newer,
// adamw_torch before (HF on torch 1.13 refuses a training_args.json naming the
// fused one). The LibTorch the core was built with decides; without LibTorch,
// adamw_torch.
OptimizerName default_optimizer();

struct TrainingArguments {
  // -- output
  std::string output_dir = "trainer_output";
  bool overwrite_output_dir = false;
  std::optional<std::string> run_name;  // defaults to output_dir, as HF
  bool do_train = false;
  bool do_eval = false;
  bool do_predict = false;

  // -- batches and optimisation
  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = 8;
  int64_t gradient_accumulation_steps = 1;
  double learning_rate = 5e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  double max_grad_norm = 1.0;
  OptimizerName optim = default_optimizer();
  // HF's "key=value,key=value" string for the optimizer (optimizer_factory.hpp).
  std::optional<std::string> optim_args;
  double num_train_epochs = 3.0;  // fractional allowed
  int64_t max_steps = -1;         // > 0 overrides num_train_epochs
  SchedulerType lr_scheduler_type = SchedulerType::linear;
  // The schedule's options as HF's dict (lr_schedule.hpp checks the keys).
  nlohmann::json lr_scheduler_kwargs = nlohmann::json::object();
  double warmup_ratio = 0.0;
  double warmup_steps = 0;              // < 1: ratio of max_steps
  double label_smoothing_factor = 0.0;  // cross-entropy targets: (1 - f) one-hot + f / classes
  bool include_num_input_tokens_seen = false;
  // train_tokens_per_second in the train metrics: the input tokens this run
  // trained on, summed over processes, over train_runtime (HF's meaning).
  bool include_tokens_per_second = false;

  // -- device and precision (trainer/device_placement.hpp)
  bool use_cpu = false;  // train on the CPU even where a CUDA GPU is present
  bool bf16 = false;     // autocast forward and loss to bfloat16 (CPU or CUDA); weights stay float32
  bool fp16 = false;     // autocast to float16 with a gradient scaler; CUDA only

  // -- logging / evaluation / saving (HF IntervalStrategy names)
  IntervalStrategy logging_strategy = IntervalStrategy::steps;
  double logging_steps = 500;  // < 1: ratio of max_steps
  bool logging_first_step = false;
  bool eval_on_start = false;  // evaluate once before the first training step (HF's sanity check)
  bool logging_nan_inf_filter = true;
  IntervalStrategy eval_strategy = IntervalStrategy::no;
  std::optional<double> eval_steps;  // defaults to logging_steps
  double eval_delay = 0;
  SaveStrategy save_strategy = SaveStrategy::steps;
  double save_steps = 500;
  std::optional<int64_t> save_total_limit;
  bool load_best_model_at_end = false;
  std::optional<std::string> metric_for_best_model;
  std::optional<bool> greater_is_better;
  std::optional<std::string> resume_from_checkpoint;  // a path, or "true" = latest in output_dir
  bool skip_memory_metrics = true;
  bool save_safetensors = true;  // model.safetensors next to model.pt (HF's default)
  // HF's just-in-time checkpoint on SIGTERM. The first SIGTERM (or SIGINT)
  // always saves a checkpoint and stops (signal_guard.hpp), whatever this
  // says: accepted so that HF configs carry over (docs/hf_compatibility.md).
  bool enable_jit_checkpoint = false;

  // -- reproducibility and data loading
  int64_t seed = 42;
  std::optional<int64_t> data_seed;
  bool full_determinism = false;
  bool dataloader_drop_last = false;
  // Threads that prepare training batches ahead of the step (data/batch_prefetcher.hpp);
  // 0: the training thread gathers each batch itself. The batches and their order
  // are the same whatever the count.
  int64_t dataloader_num_workers = 0;
  // Batches prepared ahead per worker (HF: None, meaning 2 with workers).
  std::optional<int64_t> dataloader_prefetch_factor;
  // Prepared batches are pinned for a faster copy to a CUDA device (a warning elsewhere).
  bool dataloader_pin_memory = true;
  // HF's LengthGroupedSampler: batches of similar lengths, from the length column
  // (length_column_name) of the training data.
  bool group_by_length = false;
  std::string length_column_name = "length";
  bool disable_tqdm = false;
  // HF's debug options (--debug "a b"): only "underflow_overflow" (trainer/debug_underflow_overflow.hpp).
  std::vector<std::string> debug;

  // -- integrations and plugins
  std::vector<std::string> report_to = {"none"};  // none | all | names
  std::vector<std::string> callbacks;             // further callbacks by name
  std::vector<std::string> plugin_dir;            // searched before TRAINHOOK_PLUGIN_PATH
  // Per-callback configuration: {"early_stopping": {"patience": 3}, ...}, from
  // `--plugin_config early_stopping.patience=3` flags or a "plugin_config" object.
  nlohmann::json plugin_config = nlohmann::json::object();
  PluginErrorPolicy plugin_error_policy = PluginErrorPolicy::disable;
  // Callbacks (or integrations) run in a helper process each, as if their
  // plugin_config section said "isolation": "process" (plugin_host/isolation/isolation.hpp).
  std::vector<std::string> plugin_isolation;
  // Seconds each callback's on_train_end may take before the trainer stops
  // waiting, names it and exits (the final model is saved before); 0: no bound.
  double callback_end_timeout = 120;
  bool allow_unsafe_plugin_paths = false;
  bool allow_duplicate_plugins = false;
  // The signal that saves a checkpoint at the end of the step and, under Slurm,
  // requeues the job (Slurm's `--signal=USR1@90`): a name such as USR1, or
  // none. Empty: TRAINHOOK_REQUEUE_SIGNAL, else USR1 (validation resolves it).
  std::string requeue_signal;
  // Where the run's time goes, per rank (common/profiler.hpp): profile.json
  // and a table at the end of train(); trace adds trace.json, ops LibTorch's
  // operator profile.
  ProfileMode profile = ProfileMode::none;

  // -- multi-process (set by the launcher; single process: 0 of 1)
  int32_t process_index = 0;
  int32_t world_size = 1;
  int32_t local_rank = -1;                // HF: -1 outside a launcher; LOCAL_RANK wins
  std::optional<DdpBackend> ddp_backend;  // unset: gloo on the CPU (HF's choice)
  int64_t ddp_timeout = 1800;             // seconds a collective or the rendezvous may take
};

// The CLI's model choice (HF example scripts' ModelArguments).
struct ModelArguments {
  std::string model = "mlp";  // mlp | cnn | char_transformer
  // A TorchScript archive (torch.jit.save) to train instead of a built-in model.
  std::optional<std::string> model_name_or_path;
  // cross_entropy | mse | bce_with_logits | l1: the loss of a TorchScript model
  // whose forward returns no "loss".
  std::optional<std::string> loss;
  int64_t hidden_size = 128;
  int64_t num_layers = 2;
  int64_t num_heads = 4;  // char_transformer
  // char_transformer on token files: the vocabulary size (unset: the largest id
  // of the training files + 1). Every batch's ids are checked against it.
  std::optional<int64_t> vocab_size;
  double dropout = 0.0;
  // How a multi-process run averages the model's gradients: the CLI passes it
  // to TrainerOptions::gradient_reduction (a Trainer option, not a training
  // argument, so an embedding program sets it there). bench/ddp compares the two.
  GradientReduction ddp_gradient_reduction =
      GradientReduction::overlap_with_backward;
};

// The CLI's data (HF example scripts' DataTrainingArguments).
struct DataArguments {
  // .csv (label column), .txt (character LM), .pt (tensors), .bin (token ids), a
  // folder of .npy arrays; a glob pattern names several .bin shards or folders.
  std::optional<std::string> train_file;
  std::optional<std::string> validation_file;
  std::optional<std::string> test_file;
  std::string label_column = "last";  // "first", "last", a header name or an index
  bool csv_header = false;            // first CSV row is a header
  // The label column of a CSV with a header, by name (implies csv_header); HF's
  // "label" is used when unset and the header has it.
  std::optional<std::string> label_column_name;
  double validation_split_percentage = 0;  // split from train when no validation_file
  int64_t block_size = 64;                 // character LM / token file context
  // The integer type of a token file's ids (.bin, nanoGPT/llm.c): uint16 or uint32.
  std::string token_dtype = "uint16";
  std::optional<int64_t> image_size;  // cnn: side of square images (64 features -> 8)
  double feature_scale = 1.0;         // features are multiplied by this
};


// An interval given as *_steps (logging_steps, eval_steps, save_steps;
// warmup_steps: optim/lr_schedule.hpp's warmup_steps_for) resolved against the run's total optimizer steps, as HF does:
// a value in (0, 1) is a ratio, ceil(max_steps * value); a value >= 1 is a step
// count (validate() has checked it is whole); a value <= 0 gives 0 (never).
// The trainer calls this once max_steps is known (also when it came from
// num_train_epochs); validate() keeps the fields as the user gave them.
int64_t resolve_steps(double value, int64_t max_steps);

}  // namespace trainhook
