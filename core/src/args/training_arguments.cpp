// to_json for the argument structs (HF key names) and the *_steps resolution the
// trainer applies once it knows max_steps.
#include <trainhook/args/training_arguments.hpp>

#include <cmath>

namespace trainhook {
namespace {

template <class T>
nlohmann::json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const TrainingArguments& a) {
  nlohmann::json j = nlohmann::json::object();
  j["output_dir"] = a.output_dir;
  j["overwrite_output_dir"] = a.overwrite_output_dir;
  j["run_name"] = optional_json(a.run_name);
  j["do_train"] = a.do_train;
  j["do_eval"] = a.do_eval;
  j["do_predict"] = a.do_predict;

  j["per_device_train_batch_size"] = a.per_device_train_batch_size;
  j["per_device_eval_batch_size"] = a.per_device_eval_batch_size;
  j["gradient_accumulation_steps"] = a.gradient_accumulation_steps;
  j["learning_rate"] = a.learning_rate;
  j["weight_decay"] = a.weight_decay;
  j["adam_beta1"] = a.adam_beta1;
  j["adam_beta2"] = a.adam_beta2;
  j["adam_epsilon"] = a.adam_epsilon;
  j["max_grad_norm"] = a.max_grad_norm;
  j["optim"] = a.optim;
  j["num_train_epochs"] = a.num_train_epochs;
  j["max_steps"] = a.max_steps;
  j["lr_scheduler_type"] = a.lr_scheduler_type;
  j["warmup_ratio"] = a.warmup_ratio;
  j["warmup_steps"] = a.warmup_steps;

  j["logging_strategy"] = a.logging_strategy;
  j["logging_steps"] = a.logging_steps;
  j["logging_first_step"] = a.logging_first_step;
  j["logging_nan_inf_filter"] = a.logging_nan_inf_filter;
  j["eval_strategy"] = a.eval_strategy;
  j["eval_steps"] = optional_json(a.eval_steps);
  j["eval_delay"] = a.eval_delay;
  j["save_strategy"] = a.save_strategy;
  j["save_steps"] = a.save_steps;
  j["save_total_limit"] = optional_json(a.save_total_limit);
  j["load_best_model_at_end"] = a.load_best_model_at_end;
  j["metric_for_best_model"] = optional_json(a.metric_for_best_model);
  j["greater_is_better"] = optional_json(a.greater_is_better);
  j["resume_from_checkpoint"] = optional_json(a.resume_from_checkpoint);
  j["skip_memory_metrics"] = a.skip_memory_metrics;

  j["seed"] = a.seed;
  j["data_seed"] = optional_json(a.data_seed);
  j["full_determinism"] = a.full_determinism;
  j["dataloader_drop_last"] = a.dataloader_drop_last;
  j["disable_tqdm"] = a.disable_tqdm;

  j["report_to"] = a.report_to;
  j["callbacks"] = a.callbacks;
  j["plugin_dir"] = a.plugin_dir;
  j["plugin_config"] = a.plugin_config.is_null() ? nlohmann::json::object() : a.plugin_config;
  j["plugin_error_policy"] = a.plugin_error_policy;
  j["allow_unsafe_plugin_paths"] = a.allow_unsafe_plugin_paths;
  j["allow_duplicate_plugins"] = a.allow_duplicate_plugins;

  j["process_index"] = a.process_index;
  j["world_size"] = a.world_size;
  j["local_rank"] = a.local_rank;
  j["ddp_backend"] = a.ddp_backend ? nlohmann::json(*a.ddp_backend) : nlohmann::json();
  j["ddp_timeout"] = a.ddp_timeout;
  return j;
}

nlohmann::json to_json(const ModelArguments& a) {
  nlohmann::json j = nlohmann::json::object();
  j["model"] = a.model;
  j["hidden_size"] = a.hidden_size;
  j["num_layers"] = a.num_layers;
  j["num_heads"] = a.num_heads;
  j["dropout"] = a.dropout;
  return j;
}

nlohmann::json to_json(const DataArguments& a) {
  nlohmann::json j = nlohmann::json::object();
  j["train_file"] = optional_json(a.train_file);
  j["validation_file"] = optional_json(a.validation_file);
  j["test_file"] = optional_json(a.test_file);
  j["label_column"] = a.label_column;
  j["csv_header"] = a.csv_header;
  j["validation_split_percentage"] = a.validation_split_percentage;
  j["block_size"] = a.block_size;
  j["image_size"] = optional_json(a.image_size);
  j["feature_scale"] = a.feature_scale;
  return j;
}

int64_t resolve_steps(double value, int64_t max_steps) {
  if (!(value > 0)) return 0;
  if (value < 1) {
    // The tiny slack keeps products such as 100 * 0.07 (= 7.000000000000001)
    // from rounding up to the next step.
    const double steps = std::ceil(static_cast<double>(max_steps) * value - 1e-9);
    return steps < 1 ? 1 : static_cast<int64_t>(steps);
  }
  return static_cast<int64_t>(value);
}

int64_t resolve_warmup_steps(const TrainingArguments& a, int64_t max_steps) {
  if (a.warmup_steps > 0) return resolve_steps(a.warmup_steps, max_steps);
  if (a.warmup_ratio > 0) {
    const double steps = std::ceil(static_cast<double>(max_steps) * a.warmup_ratio - 1e-9);
    return steps < 0 ? 0 : static_cast<int64_t>(steps);
  }
  return 0;
}

}  // namespace trainhook
