// The table of Hugging Face TrainingArguments that trainhook does not support,
// with the reason shown to the user, and the judgement of a given value.
#include "unsupported_arguments.hpp"

#include "argument_options.hpp"

#include <trainhook/args/secret_masking.hpp>
#include <trainhook/secret_keys.hpp>
#include <trainhook/strings.hpp>

#include <cctype>
#include <cstdio>

namespace trainhook::detail {
namespace {

constexpr const char* kOff = "false";  // a boolean that is off changes nothing

constexpr const char* kFullEval =
    "evaluating in half precision throughout is not supported; --bf16/--fp16 evaluate under autocast";
constexpr const char* kCompile = "torch.compile does not exist in LibTorch's C++ API";
constexpr const char* kDdp =
    "DDP tuning flags are not supported (gradients use 25 MB buckets; every parameter must get a gradient; "
    "buffers are broadcast once at start)";
constexpr const char* kHub = "only used with push_to_hub, which is not supported";
constexpr const char* kFsdp = "FSDP is not supported";
constexpr const char* kWorkers = "data worker threads live for the whole training run";

const std::vector<UnsupportedArgument> kTable = {
    // -- precision and devices
    {"fp16_full_eval", true, kOff, kFullEval},
    {"bf16_full_eval", true, kOff, kFullEval},
    {"fp16_opt_level", false, kAlwaysWarn,
     "only used with apex's fp16, which is not supported (--fp16 uses autocast)"},
    {"half_precision_backend", false, kAlwaysWarn, "--bf16/--fp16 always use LibTorch's autocast"},
    {"fp16_backend", false, kAlwaysWarn, "--bf16/--fp16 always use LibTorch's autocast"},
    {"tf32", true, "false,none", "TF32 (a CUDA matmul mode) is not supported"},
    {"no_cuda", true, kOff, "HF replaced no_cuda by use_cpu: give --use_cpu"},
    {"use_mps_device", true, kOff, "Apple MPS devices are not supported"},
    {"jit_mode_eval", true, kOff, "TorchScript tracing for evaluation is not supported"},
    {"use_ipex", true, kOff, "Intel Extension for PyTorch is not supported"},
    {"torch_compile", true, kOff, kCompile},
    {"torch_compile_backend", false, kAlwaysWarn, "only used with torch_compile, which is not supported"},
    {"torch_compile_mode", false, kAlwaysWarn, "only used with torch_compile, which is not supported"},
    {"torchdynamo", false, "none,", kCompile},
    {"torch_empty_cache_steps", false, kAlwaysWarn, "there is no device cache to empty on the CPU"},
    {"tpu_num_cores", false, "none", "TPUs are not supported"},
    {"tpu_metrics_debug", true, kOff, "TPUs are not supported"},
    // -- distributed back ends
    {"deepspeed", false, "none,", "DeepSpeed is not supported"},
    {"fsdp", false, "none,,false,[]", kFsdp},
    {"fsdp_config", false, kAlwaysWarn, "only used with fsdp, which is not supported"},
    {"fsdp_min_num_params", false, kAlwaysWarn, "only used with fsdp, which is not supported"},
    {"fsdp_transformer_layer_cls_to_wrap", false, kAlwaysWarn, "only used with fsdp, which is not supported"},
    {"sharded_ddp", false, "none,,false,[]", "FairScale sharded DDP is not supported"},
    {"accelerator_config", false, kAlwaysWarn, "trainhook does not use Accelerate"},
    {"parallelism_config", false, "none,{}", "tensor/context parallelism is not supported"},
    {"dispatch_batches", false, kAlwaysWarn, "trainhook does not use Accelerate"},
    {"split_batches", false, kAlwaysWarn, "trainhook does not use Accelerate"},
    {"ddp_find_unused_parameters", false, kAlwaysWarn, kDdp},
    {"ddp_bucket_cap_mb", false, kAlwaysWarn, kDdp},
    {"ddp_broadcast_buffers", false, kAlwaysWarn, kDdp},
    {"save_on_each_node", true, kAlwaysWarn, "there is one node: checkpoints are written by process 0"},
    {"log_on_each_node", true, kAlwaysWarn, "there is one node: logs are written by process 0"},
    {"average_tokens_across_devices", true, kAlwaysWarn, "a single process has one device"},
    {"eval_use_gather_object", true, kAlwaysWarn, "a single process gathers nothing"},
    {"mp_parameters", false, kAlwaysWarn, "SageMaker model parallelism is not supported"},
    // -- Hugging Face Hub
    {"push_to_hub", true, kOff,
     "uploading to the Hugging Face Hub is not supported (a flyte plugin can upload checkpoints)"},
    {"hub_model_id", false, kAlwaysWarn, kHub},
    {"hub_strategy", false, kAlwaysWarn, kHub},
    {"hub_token", false, kAlwaysWarn, kHub},
    {"hub_private_repo", true, kAlwaysWarn, kHub},
    {"hub_always_push", true, kAlwaysWarn, kHub},
    {"hub_revision", false, kAlwaysWarn, kHub},
    {"push_to_hub_model_id", false, kAlwaysWarn, kHub},
    {"push_to_hub_organization", false, kAlwaysWarn, kHub},
    {"push_to_hub_token", false, kAlwaysWarn, kHub},
    // -- optimisation
    {"optim_target_modules", false, "none", "GaLore/APOLLO target modules are not supported"},
    {"adafactor", true, kOff, "Adafactor is not supported: use --optim adamw_torch, sgd, adagrad or rmsprop"},
    {"gradient_checkpointing", true, kOff, "the built-in models do not support activation checkpointing"},
    {"gradient_checkpointing_kwargs", false, kAlwaysWarn,
     "only used with gradient_checkpointing, which is not supported"},
    {"auto_find_batch_size", true, kOff,
     "the batch size is not searched automatically: set per_device_train_batch_size"},
    {"neftune_noise_alpha", false, "none", "NEFTune noise is not supported"},
    {"use_liger_kernel", true, kOff, "Liger kernels are not supported"},
    {"liger_kernel_config", false, kAlwaysWarn, "only used with use_liger_kernel, which is not supported"},
    // -- evaluation and prediction
    {"prediction_loss_only", true, kOff,
     "evaluation always gathers predictions and labels for compute_metrics"},
    {"eval_accumulation_steps", false, kAlwaysWarn, "predictions are gathered on the CPU already"},
    {"eval_do_concat_batches", true, "true",
     "compute_metrics always gets the whole evaluation set concatenated"},
    {"batch_eval_metrics", true, kOff, "compute_metrics runs once over the whole evaluation set"},
    {"include_inputs_for_metrics", true, kOff, "EvalPrediction carries predictions and label_ids only"},
    {"include_for_metrics", false, "none,,[]", "EvalPrediction carries predictions and label_ids only"},
    {"past_index", false, "-1", "models with past states (Transformer-XL, XLNet) are not supported"},
    {"label_names", false, "none,[]", "the built-in data has one label tensor"},
    {"use_legacy_prediction_loop", true, kOff, "there is one prediction loop"},
    // -- data loading
    {"dataloader_persistent_workers", true, kAlwaysWarn, kWorkers},
    {"remove_unused_columns", true, kAlwaysWarn, "the built-in data has no unused columns"},
    {"train_sampling_strategy", false, "random", "only random sampling is supported"},
    {"ignore_data_skip", true, kOff, "a resumed run always continues the data order where it stopped"},
    // -- logging and checkpoints
    {"logging_dir", false, kAlwaysWarn,
     "HF deprecated logging_dir; set TENSORBOARD_LOGGING_DIR to choose the TensorBoard folder"},
    {"log_level", false, kAlwaysWarn, "trainhook's log level is not an argument"},
    {"log_level_replica", false, kAlwaysWarn, "trainhook's log level is not an argument"},
    {"save_only_model", true, kOff,
     "checkpoints always hold optimizer, scheduler and RNG state so resume is exact"},
    {"restore_callback_states_from_checkpoint", true, kAlwaysWarn,
     "stateful callbacks are always restored on resume"},
    {"use_cache", true, kAlwaysWarn, "the built-in models keep no key/value cache"},
    {"ray_scope", false, kAlwaysWarn, "hyperparameter search is not supported"},
    {"project", false, kAlwaysWarn, "the trackio integration is not available"},
    {"trackio_space_id", false, kAlwaysWarn, "the trackio integration is not available"},
    // -- renamed by HF
    {"evaluation_strategy", false, "none", "HF renamed it: use --eval_strategy"},
    {"per_gpu_train_batch_size", false, "none", "HF renamed it: use --per_device_train_batch_size"},
    {"per_gpu_eval_batch_size", false, "none", "HF renamed it: use --per_device_eval_batch_size"},
};

using strings::lower;
using strings::trim;

std::string number_text(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}

// The value in the spelling of the harmless lists: none, true/false (for
// flag-like arguments), numbers as %g, empty containers as {} / [], other text
// lower case.
std::string canonical(const UnsupportedArgument& arg, const nlohmann::json& v) {
  if (v.is_null()) return "none";
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) {
    if (arg.flag_like && (v == 0 || v == 1)) return v == 1 ? "true" : "false";
    return number_text(v.get<double>());
  }
  if (v.is_object()) return v.empty() ? "{}" : v.dump();
  if (v.is_array()) return v.empty() ? "[]" : v.dump();
  const std::string text = lower(trim(v.get<std::string>()));
  if (text == "none" || text == "null") return "none";
  bool b = false;
  if (arg.flag_like && parse_bool_literal(text, b)) return b ? "true" : "false";
  try {
    size_t used = 0;
    const double d = std::stod(text, &used);
    if (used == text.size()) return number_text(d);
  } catch (const std::exception&) {
  }
  return text;
}

bool listed(const std::string& value, const char* list) {
  const std::string all = list;
  size_t start = 0;
  while (true) {
    const size_t comma = all.find(',', start);
    if (all.substr(start, comma == std::string::npos ? std::string::npos : comma - start) == value)
      return true;
    if (comma == std::string::npos) return false;
    start = comma + 1;
  }
}

}  // namespace

const std::vector<UnsupportedArgument>& unsupported_arguments() { return kTable; }

const UnsupportedArgument* find_unsupported(const std::string& name) {
  for (const auto& a : kTable)
    if (name == a.name) return &a;
  return nullptr;
}

UnsupportedVerdict judge_unsupported(const UnsupportedArgument& arg, const nlohmann::json& value,
                                     const std::string& where) {
  // Credentials (the one rule, sdk secret_keys.hpp) are never echoed; values
  // inside objects are masked the way training_args.json masks them.
  const std::string shown =
      is_secret_key(arg.name) ? secret_placeholder(arg.name) : describe_value(mask_secrets(value));
  UnsupportedVerdict verdict;
  const bool harmless =
      arg.harmless_values == kAlwaysWarn ||
      (arg.harmless_values != kAlwaysError && listed(canonical(arg, value), arg.harmless_values));
  if (harmless) {
    verdict.message = where + " = " + shown + " ignored: the Hugging Face argument '" + arg.name +
                      "' is not supported (" + arg.reason + ")";
    return verdict;
  }
  verdict.is_error = true;
  verdict.message = where + " = " + shown + ": the Hugging Face argument '" + arg.name +
                    "' is not supported: " + arg.reason;
  if (arg.harmless_values != kAlwaysError) {
    std::string allowed = arg.harmless_values;
    verdict.message += " (remove it";
    if (!allowed.empty() && allowed != "none" && allowed.rfind("none", 0) != 0) {
      verdict.message += ", or set it to " + allowed.substr(0, allowed.find(','));
    }
    verdict.message += ")";
  }
  return verdict;
}

}  // namespace trainhook::detail
