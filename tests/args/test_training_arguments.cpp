// to_json (training_args.json's HF names), its round trip through the parser,
// and the *_steps ratio resolution.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/hf_training_args.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <filesystem>
#include <fstream>
#include <set>

namespace fs = std::filesystem;
using trainhook::TrainingArguments;
using trainhook::testkit::TempDir;

namespace {

// A TrainingArguments with every field away from its default (and valid).
TrainingArguments non_default() {
  TrainingArguments a;
  a.output_dir = "out/x";
  a.overwrite_output_dir = true;
  a.run_name = "run";
  a.do_train = true;
  a.do_eval = true;
  a.do_predict = true;
  a.enable_jit_checkpoint = true;
  a.per_device_train_batch_size = 16;
  a.per_device_eval_batch_size = 32;
  a.gradient_accumulation_steps = 4;
  a.learning_rate = 1e-3;
  a.weight_decay = 0.01;
  a.adam_beta1 = 0.8;
  a.adam_beta2 = 0.99;
  a.adam_epsilon = 1e-6;
  a.max_grad_norm = 0.5;
  a.optim = trainhook::OptimizerName::sgd;
  a.num_train_epochs = 1.5;
  a.max_steps = 100;
  a.lr_scheduler_type = trainhook::SchedulerType::cosine;
  a.warmup_ratio = 0.1;
  a.warmup_steps = 5;
  a.logging_strategy = trainhook::IntervalStrategy::epoch;
  a.logging_steps = 10;
  a.logging_first_step = true;
  a.eval_on_start = true;
  a.logging_nan_inf_filter = false;
  a.eval_strategy = trainhook::IntervalStrategy::steps;
  a.eval_steps = 20;
  a.eval_delay = 2;
  a.save_strategy = trainhook::SaveStrategy::best;
  a.save_steps = 40;
  a.save_total_limit = 3;
  a.load_best_model_at_end = true;
  a.metric_for_best_model = "accuracy";
  a.greater_is_better = true;
  a.resume_from_checkpoint = "out/x/checkpoint-20";
  a.skip_memory_metrics = false;
  a.seed = 7;
  a.data_seed = 8;
  a.full_determinism = true;
  a.dataloader_drop_last = true;
  a.dataloader_num_workers = 2;
  a.dataloader_prefetch_factor = 3;
  a.dataloader_pin_memory = false;
  a.group_by_length = true;
  a.length_column_name = "lengths";
  a.disable_tqdm = true;
  a.report_to = {"tensorboard", "mlflow"};
  a.requeue_signal = "USR2";
  a.profile = trainhook::ProfileMode::trace;
  a.callbacks = {"early_stopping"};
  a.optim_args = "momentum=0.9";
  a.lr_scheduler_kwargs = {{"num_cycles", 0.25}};
  a.label_smoothing_factor = 0.1;
  a.include_num_input_tokens_seen = true;
  a.include_tokens_per_second = true;
  a.save_safetensors = false;
  a.plugin_dir = {"/opt/p"};
  a.plugin_config = {{"early_stopping", {{"patience", 3}}}};
  a.plugin_error_policy = trainhook::PluginErrorPolicy::fail;
  a.plugin_isolation = {"mlflow"};
  a.allow_unsafe_plugin_paths = true;
  a.allow_duplicate_plugins = true;
  a.process_index = 1;
  a.world_size = 2;
  a.local_rank = 1;
  a.ddp_backend = trainhook::DdpBackend::gloo;
  a.ddp_timeout = 60;
  a.callback_end_timeout = 30;
  a.debug = {"underflow_overflow"};
  a.use_cpu = true;
  a.bf16 = true;
  a.fp16 = true;  // both: this file checks serialisation; the Trainer refuses the pair
  return a;
}

}  // namespace

// to_json is generated from the option table; these are the exact bytes the
// hand-written to_json gave before (no behaviour change), for the
// defaults and for a run with every choice away from its default.
TEST_CASE("to_json output is byte-identical to the hand-written form it replaced") {
  TrainingArguments defaults;
  // optim's default follows the LibTorch built with (default_optimizer); the form is the same.
  defaults.optim = trainhook::OptimizerName::adamw_torch;
  CHECK(
      trainhook::to_json(defaults).dump() ==
      R"({"adam_beta1":0.9,"adam_beta2":0.999,"adam_epsilon":1e-08,"allow_duplicate_plugins":false,)"
      R"("allow_unsafe_plugin_paths":false,"bf16":false,"callback_end_timeout":120.0,"callbacks":[],"data_seed":null,"dataloader_drop_last":false,)"
      R"("dataloader_num_workers":0,"dataloader_pin_memory":true,"dataloader_prefetch_factor":null,)"
      R"("ddp_backend":null,"ddp_timeout":1800,"debug":[],"disable_tqdm":false,"do_eval":false,"do_predict":false,)"
      R"("do_train":false,"enable_jit_checkpoint":false,"eval_delay":0.0,"eval_on_start":false,"eval_steps":null,"eval_strategy":"no",)"
      R"("fp16":false,"full_determinism":false,"gradient_accumulation_steps":1,"greater_is_better":null,"group_by_length":false,)"
      R"("include_num_input_tokens_seen":false,"include_tokens_per_second":false,"label_smoothing_factor":0.0,"learning_rate":5e-05,)"
      R"("length_column_name":"length","load_best_model_at_end":false,"local_rank":-1,"logging_first_step":false,)"
      R"("logging_nan_inf_filter":true,"logging_steps":500.0,"logging_strategy":"steps",)"
      R"("lr_scheduler_kwargs":{},"lr_scheduler_type":"linear","max_grad_norm":1.0,"max_steps":-1,)"
      R"("metric_for_best_model":null,"num_train_epochs":3.0,"optim":"adamw_torch","optim_args":null,)"
      R"("output_dir":"trainer_output","overwrite_output_dir":false,"per_device_eval_batch_size":8,)"
      R"("per_device_train_batch_size":8,"plugin_config":{},"plugin_dir":[],)"
      R"("plugin_error_policy":"disable","plugin_isolation":[],"process_index":0,"profile":"none","report_to":["none"],)"
      R"("requeue_signal":"","resume_from_checkpoint":null,"run_name":null,"save_safetensors":true,"save_steps":500.0,)"
      R"("save_strategy":"steps","save_total_limit":null,"seed":42,"skip_memory_metrics":true,)"
      R"("use_cpu":false,"warmup_ratio":0.0,"warmup_steps":0,"weight_decay":0.0,"world_size":1})");
  TrainingArguments a;
  a.run_name = "r";
  a.eval_strategy = trainhook::IntervalStrategy::steps;
  a.eval_steps = 0.25;
  a.save_strategy = trainhook::SaveStrategy::best;
  a.optim = trainhook::OptimizerName::sgd;
  a.lr_scheduler_type = trainhook::SchedulerType::cosine;
  a.logging_strategy = trainhook::IntervalStrategy::epoch;
  a.save_total_limit = 2;
  a.greater_is_better = false;
  a.metric_for_best_model = "accuracy";
  a.report_to = {"tensorboard", "mlflow"};
  a.plugin_config = {{"wandb", {{"project", "p"}}}};
  a.plugin_error_policy = trainhook::PluginErrorPolicy::fail;
  a.ddp_backend = trainhook::DdpBackend::gloo;
  a.data_seed = 7;
  a.callbacks = {"early_stopping"};
  CHECK(
      trainhook::to_json(a).dump() ==
      R"({"adam_beta1":0.9,"adam_beta2":0.999,"adam_epsilon":1e-08,"allow_duplicate_plugins":false,)"
      R"("allow_unsafe_plugin_paths":false,"bf16":false,"callback_end_timeout":120.0,"callbacks":["early_stopping"],"data_seed":7,)"
      R"("dataloader_drop_last":false,"dataloader_num_workers":0,"dataloader_pin_memory":true,)"
      R"("dataloader_prefetch_factor":null,"ddp_backend":"gloo","ddp_timeout":1800,"debug":[],"disable_tqdm":false,)"
      R"("do_eval":false,"do_predict":false,"do_train":false,"enable_jit_checkpoint":false,"eval_delay":0.0,)"
      R"("eval_on_start":false,"eval_steps":0.25,)"
      R"("eval_strategy":"steps","fp16":false,"full_determinism":false,"gradient_accumulation_steps":1,)"
      R"("greater_is_better":false,"group_by_length":false,"include_num_input_tokens_seen":false,"include_tokens_per_second":false,"label_smoothing_factor":0.0,)"
      R"("learning_rate":5e-05,"length_column_name":"length","load_best_model_at_end":false,"local_rank":-1,)"
      R"("logging_first_step":false,"logging_nan_inf_filter":true,"logging_steps":500.0,)"
      R"("logging_strategy":"epoch","lr_scheduler_kwargs":{},"lr_scheduler_type":"cosine",)"
      R"("max_grad_norm":1.0,"max_steps":-1,"metric_for_best_model":"accuracy","num_train_epochs":3.0,)"
      R"("optim":"sgd","optim_args":null,"output_dir":"trainer_output","overwrite_output_dir":false,)"
      R"("per_device_eval_batch_size":8,"per_device_train_batch_size":8,)"
      R"("plugin_config":{"wandb":{"project":"p"}},"plugin_dir":[],"plugin_error_policy":"fail",)"
      R"("plugin_isolation":[],"process_index":0,"profile":"none","report_to":["tensorboard","mlflow"],"requeue_signal":"","resume_from_checkpoint":null,)"
      R"("run_name":"r","save_safetensors":true,"save_steps":500.0,"save_strategy":"best",)"
      R"("save_total_limit":2,"seed":42,"skip_memory_metrics":true,"use_cpu":false,"warmup_ratio":0.0,"warmup_steps":0,)"
      R"("weight_decay":0.0,"world_size":1})");
  CHECK(trainhook::to_json(trainhook::ModelArguments{}).dump() ==
        R"({"ddp_gradient_reduction":"overlap","dropout":0.0,"hidden_size":128,"loss":null,"model":"mlp",)"
        R"("model_name_or_path":null,"num_heads":4,"num_layers":2,"vocab_size":null})");
  trainhook::DataArguments d;
  d.train_file = "t.csv";
  d.image_size = 8;
  CHECK(
      trainhook::to_json(d).dump() ==
      R"({"block_size":64,"csv_header":false,"feature_scale":1.0,"image_size":8,"label_column":"last",)"
      R"("label_column_name":null,"test_file":null,"token_dtype":"uint16","train_file":"t.csv","validation_file":null,)"
      R"("validation_split_percentage":0.0})");
}

TEST_CASE("to_json writes every field with the HF names, unset optionals are null") {
  const nlohmann::json j = trainhook::to_json(TrainingArguments{});
  const std::set<std::string> expected = {"output_dir",
                                          "overwrite_output_dir",
                                          "run_name",
                                          "do_train",
                                          "do_eval",
                                          "do_predict",
                                          "per_device_train_batch_size",
                                          "per_device_eval_batch_size",
                                          "gradient_accumulation_steps",
                                          "learning_rate",
                                          "weight_decay",
                                          "adam_beta1",
                                          "adam_beta2",
                                          "adam_epsilon",
                                          "max_grad_norm",
                                          "optim",
                                          "num_train_epochs",
                                          "max_steps",
                                          "lr_scheduler_type",
                                          "warmup_ratio",
                                          "warmup_steps",
                                          "logging_strategy",
                                          "logging_steps",
                                          "logging_first_step",
                                          "logging_nan_inf_filter",
                                          "eval_strategy",
                                          "eval_steps",
                                          "eval_delay",
                                          "save_strategy",
                                          "save_steps",
                                          "save_total_limit",
                                          "load_best_model_at_end",
                                          "metric_for_best_model",
                                          "greater_is_better",
                                          "resume_from_checkpoint",
                                          "skip_memory_metrics",
                                          "enable_jit_checkpoint",
                                          "seed",
                                          "data_seed",
                                          "full_determinism",
                                          "dataloader_drop_last",
                                          "dataloader_num_workers",
                                          "dataloader_prefetch_factor",
                                          "dataloader_pin_memory",
                                          "group_by_length",
                                          "length_column_name",
                                          "eval_on_start",
                                          "disable_tqdm",
                                          "report_to",
                                          "requeue_signal",
                                          "profile",
                                          "callbacks",
                                          "plugin_dir",
                                          "plugin_config",
                                          "plugin_error_policy",
                                          "plugin_isolation",
                                          "callback_end_timeout",
                                          "debug",
                                          "allow_unsafe_plugin_paths",
                                          "allow_duplicate_plugins",
                                          "process_index",
                                          "world_size",
                                          "local_rank",
                                          "ddp_backend",
                                          "ddp_timeout",
                                          "optim_args",
                                          "lr_scheduler_kwargs",
                                          "label_smoothing_factor",
                                          "include_num_input_tokens_seen",
                                          "include_tokens_per_second",
                                          "save_safetensors",
                                          "use_cpu",
                                          "bf16",
                                          "fp16"};
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  CHECK(keys == expected);
  CHECK(j["eval_steps"].is_null());
  CHECK(j["run_name"].is_null());
  CHECK(j["save_total_limit"].is_null());
  CHECK(j["greater_is_better"].is_null());
  CHECK(j["learning_rate"] == 5e-5);
  CHECK(j["report_to"] == nlohmann::json::array({"none"}));
  CHECK(j["plugin_config"] == nlohmann::json::object());

  const nlohmann::json m = trainhook::to_json(trainhook::ModelArguments{});
  CHECK(m["model"] == "mlp");
  const nlohmann::json d = trainhook::to_json(trainhook::DataArguments{});
  CHECK(d["train_file"].is_null());
  CHECK(d["label_column"] == "last");
}

TEST_CASE("to_json round trip: training_args.json read back as a --config file and from JSON") {
  const TrainingArguments a = non_default();
  const nlohmann::json j = trainhook::to_json(a);
  // Every field really differs from the default, so the round trip checks each.
  const nlohmann::json defaults = trainhook::to_json(TrainingArguments{});
  for (const auto& [k, v] : j.items()) CHECK_MESSAGE(v != defaults[k], k);

  const TempDir dir("trainhook_ta");
  const fs::path file = dir.path / "training_args.json";
  std::ofstream(file) << j.dump(2);
  const auto parsed = trainhook::parse_train_arguments({"--config", file.string()});
  CHECK(trainhook::to_json(parsed.training) == j);
  CHECK(parsed.warnings.empty());

  CHECK(trainhook::to_json(trainhook::training_arguments_from_json(j, "training_args.json")) == j);

  // A checkpoint's two files: HF's fields and ours, together the whole.
  const trainhook::SplitTrainingArgs split = trainhook::split_training_args(j);
  CHECK(split.hf.contains("learning_rate"));
  CHECK(split.trainhook.contains("plugin_config"));
  CHECK_FALSE(split.hf.contains("callbacks"));
  // A field transformers 5 removed is ours: 5.x's HfArgumentParser refuses an unknown
  // key with its default settings, and 4.47.1's does without it.
  CHECK_FALSE(split.hf.contains("warmup_ratio"));
  CHECK(split.trainhook.contains("warmup_ratio"));
  CHECK(split.hf.size() + split.trainhook.size() == j.size());
  // HF's part alone is a --config (ours alone may not be: early_stopping needs HF's
  // metric_for_best_model); both merged are the whole, read back above.
  std::ofstream(file) << split.hf.dump(2);
  const nlohmann::json from_hf =
      trainhook::to_json(trainhook::parse_train_arguments({"--config", file.string()}).training);
  for (const auto& [k, v] : split.hf.items()) CHECK_MESSAGE(from_hf[k] == v, k);
  nlohmann::json merged = split.hf;
  merged.update(split.trainhook);
  CHECK(merged == j);
}

TEST_CASE("training_arguments_from_json: unknown keys and bad values name the source") {
  try {
    trainhook::training_arguments_from_json({{"learning_rte", 1}}, "ckpt/training_args.json");
    FAIL("expected an ArgumentError");
  } catch (const trainhook::ArgumentError& e) {
    const std::string m = e.what();
    CHECK(m.find("ckpt/training_args.json") != std::string::npos);
    CHECK(m.find("did you mean 'learning_rate'") != std::string::npos);
  }
  // Model/data arguments are not training arguments.
  CHECK_THROWS_AS(trainhook::training_arguments_from_json({{"model", "mlp"}}, "x"), trainhook::ArgumentError);
  CHECK_THROWS_WITH_AS(trainhook::training_arguments_from_json({{"seed", "abc"}}, "x.json"),
                       doctest::Contains("x.json: key 'seed': expected an integer"),
                       trainhook::ArgumentError);
}

TEST_CASE("resolve_steps: ratios below 1, counts from 1, 0 = never") {
  CHECK(trainhook::resolve_steps(500, 1000) == 500);
  CHECK(trainhook::resolve_steps(1, 1000) == 1);
  CHECK(trainhook::resolve_steps(0.1, 1000) == 100);
  CHECK(trainhook::resolve_steps(0.07, 100) == 7);  // not 8 from 7.000000000000001
  CHECK(trainhook::resolve_steps(0.25, 10) == 3);   // ceil(2.5)
  CHECK(trainhook::resolve_steps(0.001, 10) == 1);  // at least one step
  CHECK(trainhook::resolve_steps(0, 1000) == 0);
  CHECK(trainhook::resolve_steps(-1, 1000) == 0);
}

