#include <trainhook/args/hf_training_args.hpp>

#include <algorithm>
#include <array>

namespace trainhook {
namespace {

// The init fields of TrainingArguments that both transformers we test against
// have (4.47.1 on torch 1.13, 5.24 on torch 2.x), sorted, so that either one's
// HfArgumentParser reads the file with its default settings. Fields 5.x removed
// (warmup_ratio, overwrite_output_dir, save_safetensors, group_by_length,
// include_tokens_per_second, evaluation_strategy, logging_dir, no_cuda, ...) and fields
// of later releases (enable_jit_checkpoint) stay ours, in trainhook_args.json.
constexpr std::string_view kHfFields[] = {"accelerator_config",
                                          "adam_beta1",
                                          "adam_beta2",
                                          "adam_epsilon",
                                          "auto_find_batch_size",
                                          "average_tokens_across_devices",
                                          "batch_eval_metrics",
                                          "bf16",
                                          "bf16_full_eval",
                                          "data_seed",
                                          "dataloader_drop_last",
                                          "dataloader_num_workers",
                                          "dataloader_persistent_workers",
                                          "dataloader_pin_memory",
                                          "dataloader_prefetch_factor",
                                          "ddp_backend",
                                          "ddp_broadcast_buffers",
                                          "ddp_bucket_cap_mb",
                                          "ddp_find_unused_parameters",
                                          "ddp_timeout",
                                          "debug",
                                          "deepspeed",
                                          "disable_tqdm",
                                          "do_eval",
                                          "do_predict",
                                          "do_train",
                                          "eval_accumulation_steps",
                                          "eval_delay",
                                          "eval_do_concat_batches",
                                          "eval_on_start",
                                          "eval_steps",
                                          "eval_strategy",
                                          "eval_use_gather_object",
                                          "fp16",
                                          "fp16_full_eval",
                                          "fsdp",
                                          "fsdp_config",
                                          "full_determinism",
                                          "gradient_accumulation_steps",
                                          "gradient_checkpointing",
                                          "gradient_checkpointing_kwargs",
                                          "greater_is_better",
                                          "hub_always_push",
                                          "hub_model_id",
                                          "hub_private_repo",
                                          "hub_strategy",
                                          "hub_token",
                                          "ignore_data_skip",
                                          "include_for_metrics",
                                          "include_num_input_tokens_seen",
                                          "label_names",
                                          "label_smoothing_factor",
                                          "learning_rate",
                                          "length_column_name",
                                          "load_best_model_at_end",
                                          "local_rank",
                                          "log_level",
                                          "log_level_replica",
                                          "log_on_each_node",
                                          "logging_first_step",
                                          "logging_nan_inf_filter",
                                          "logging_steps",
                                          "logging_strategy",
                                          "lr_scheduler_kwargs",
                                          "lr_scheduler_type",
                                          "max_grad_norm",
                                          "max_steps",
                                          "metric_for_best_model",
                                          "neftune_noise_alpha",
                                          "num_train_epochs",
                                          "optim",
                                          "optim_args",
                                          "optim_target_modules",
                                          "output_dir",
                                          "per_device_eval_batch_size",
                                          "per_device_train_batch_size",
                                          "prediction_loss_only",
                                          "push_to_hub",
                                          "remove_unused_columns",
                                          "report_to",
                                          "restore_callback_states_from_checkpoint",
                                          "resume_from_checkpoint",
                                          "run_name",
                                          "save_on_each_node",
                                          "save_only_model",
                                          "save_steps",
                                          "save_strategy",
                                          "save_total_limit",
                                          "seed",
                                          "skip_memory_metrics",
                                          "tf32",
                                          "torch_compile",
                                          "torch_compile_backend",
                                          "torch_compile_mode",
                                          "torch_empty_cache_steps",
                                          "use_cpu",
                                          "use_liger_kernel",
                                          "warmup_steps",
                                          "weight_decay"};

}  // namespace

bool is_hf_training_argument(std::string_view name) {
  return std::binary_search(std::begin(kHfFields), std::end(kHfFields), name);
}

SplitTrainingArgs split_training_args(const nlohmann::json& all) {
  SplitTrainingArgs out;
  for (const auto& [key, value] : all.items())
    (is_hf_training_argument(key) ? out.hf : out.trainhook)[key] = value;
  return out;
}

}  // namespace trainhook
