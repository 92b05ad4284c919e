// The option table of `trainhook train` and the typed conversions behind it.
#include "argument_options.hpp"

#include <trainhook/common/closest_name.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>

namespace trainhook::detail {
namespace {

using strings::lower;
using strings::trim;

bool is_null_text(const std::string& text) {
  const std::string t = lower(trim(text));
  return t == "none" || t == "null" || t == "~";
}

// ---- scalar conversions (JSON from a file, or a JSON string from a flag) ----

bool to_bool(const nlohmann::json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer() || v.is_number_unsigned()) {
    const auto i = v.get<int64_t>();
    if (i == 0 || i == 1) return i == 1;
  }
  if (v.is_string()) {
    bool b = false;
    if (parse_bool_literal(v.get<std::string>(), b)) return b;
  }
  throw ValueError("expected a boolean (true/false, 1/0, yes/no), got " + describe_value(v));
}

int64_t to_integer(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      throw ValueError("expected an integer, got " + describe_value(v) + " (too large)");
    return v.get<int64_t>();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  if (v.is_string()) {
    const std::string t = trim(v.get<std::string>());
    if (!t.empty()) {
      try {
        size_t used = 0;
        const long long i = std::stoll(t, &used, 10);
        if (used == t.size()) return i;
      } catch (const std::exception&) {
        throw ValueError("expected an integer, got " + describe_value(v));
      }
    }
  }
  throw ValueError("expected an integer, got " + describe_value(v));
}

double to_number(const nlohmann::json& v) {
  double d = std::numeric_limits<double>::quiet_NaN();
  bool ok = false;
  if (v.is_number()) {
    d = v.get<double>();
    ok = true;
  } else if (v.is_string()) {
    const std::string t = trim(v.get<std::string>());
    if (!t.empty()) {
      try {
        size_t used = 0;
        d = std::stod(t, &used);
        ok = used == t.size();
      } catch (const std::exception&) {
        ok = false;
      }
    }
  }
  if (!ok) throw ValueError("expected a number, got " + describe_value(v));
  if (!std::isfinite(d)) throw ValueError("expected a finite number, got " + describe_value(v));
  return d;
}

std::string to_string_value(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  // YAML/JSON may give a number or a bool for a string field (run_name: 1).
  if (v.is_number() || v.is_boolean()) return v.dump();
  throw ValueError("expected a string, got " + describe_value(v));
}

std::vector<std::string> to_list(const nlohmann::json& v) {
  std::vector<std::string> parts;
  auto add_split = [&parts](const std::string& s) {
    for (auto& piece : strings::split(s, ',', /*trim_pieces=*/true)) {
      if (piece.empty()) throw ValueError("empty name in list \"" + s + "\"");
      parts.push_back(std::move(piece));
    }
  };
  if (v.is_string()) {
    add_split(v.get<std::string>());
  } else if (v.is_array()) {
    for (const auto& item : v) {
      if (!item.is_string()) throw ValueError("expected a list of strings, got " + describe_value(v));
      add_split(item.get<std::string>());
    }
  } else {
    throw ValueError("expected a list of strings or a comma-separated string, got " + describe_value(v));
  }
  return parts;
}

// ---- field binding -----------------------------------------------------------

template <class T, class = void>
struct has_enum_names : std::false_type {};
template <class T>
struct has_enum_names<T, std::void_t<decltype(EnumNames<T>::all)>> : std::true_type {};

template <class T, class = void>
struct Kind;
template <>
struct Kind<bool> {
  static constexpr ValueKind value = ValueKind::Bool;
  static bool convert(const nlohmann::json& v) { return to_bool(v); }
};
template <>
struct Kind<int64_t> {
  static constexpr ValueKind value = ValueKind::Integer;
  static int64_t convert(const nlohmann::json& v) { return to_integer(v); }
};
template <>
struct Kind<int32_t> {
  static constexpr ValueKind value = ValueKind::Integer;
  static int32_t convert(const nlohmann::json& v) {
    const int64_t i = to_integer(v);
    if (i < INT32_MIN || i > INT32_MAX)
      throw ValueError("expected a 32-bit integer, got " + describe_value(v));
    return static_cast<int32_t>(i);
  }
};
template <>
struct Kind<double> {
  static constexpr ValueKind value = ValueKind::Number;
  static double convert(const nlohmann::json& v) { return to_number(v); }
};
template <>
struct Kind<std::string> {
  static constexpr ValueKind value = ValueKind::String;
  static std::string convert(const nlohmann::json& v) { return to_string_value(v); }
};
template <>
struct Kind<std::vector<std::string>> {
  static constexpr ValueKind value = ValueKind::List;
  static std::vector<std::string> convert(const nlohmann::json& v) { return to_list(v); }
};
// A choice (strategies.hpp): parsed here, once, so an unknown name fails with
// the flag or config key that gave it and the step loop never sees a string.
template <class E>
struct Kind<E, std::enable_if_t<has_enum_names<E>::value>> {
  static constexpr ValueKind value = ValueKind::String;
  static E convert(const nlohmann::json& v) {
    if (!v.is_string())
      throw ValueError("expected one of " + enum_choices<E>() + ", got " + describe_value(v));
    const std::string text = v.get<std::string>();
    if (auto e = parse_enum<E>(text)) return *e;
    std::vector<std::string> names;
    for (const auto& n : EnumNames<E>::all) names.push_back(n.name);
    std::string message = "expected one of " + enum_choices<E>() + ", got '" + text + "'";
    const std::string close = closest_name(text, names);
    if (!close.empty()) message += " (did you mean '" + close + "'?)";
    throw ValueError(message);
  }
};
template <class T>
struct Kind<std::optional<T>> {
  static constexpr ValueKind value = Kind<T>::value == ValueKind::Bool      ? ValueKind::OptionalBool
                                     : Kind<T>::value == ValueKind::Integer ? ValueKind::OptionalInteger
                                     : Kind<T>::value == ValueKind::Number  ? ValueKind::OptionalNumber
                                                                            : ValueKind::OptionalString;
  static std::optional<T> convert(const nlohmann::json& v) {
    // null (a file) or none/null (a flag) unsets an optional, so a flag can
    // undo a config file's value.
    if (v.is_null() || (v.is_string() && is_null_text(v.get<std::string>()))) return std::nullopt;
    return Kind<T>::convert(v);
  }
};

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class Part>
Part& part(ParsedArguments& p);
template <>
TrainingArguments& part<TrainingArguments>(ParsedArguments& p) {
  return p.training;
}
template <>
ModelArguments& part<ModelArguments>(ParsedArguments& p) {
  return p.model;
}
template <>
DataArguments& part<DataArguments>(ParsedArguments& p) {
  return p.data;
}
template <class Part>
const Part& part(const ParsedArguments& p) {
  return part<Part>(const_cast<ParsedArguments&>(p));
}

template <class T>
nlohmann::json as_json(const T& v) {
  if constexpr (has_enum_names<T>::value) {
    return enum_name(v);
  } else {
    return nlohmann::json(v);
  }
}
template <class T>
nlohmann::json as_json(const std::optional<T>& v) {
  return v ? as_json(*v) : nlohmann::json(nullptr);
}

template <class Part>
constexpr ArgumentPart part_of() {
  if constexpr (std::is_same_v<Part, TrainingArguments>) return ArgumentPart::Training;
  if constexpr (std::is_same_v<Part, ModelArguments>) return ArgumentPart::Model;
  return ArgumentPart::Data;
}

template <class Part, class T>
OptionSpec field(const char* name, OptionGroup group, T Part::*member, const char* help) {
  OptionSpec s;
  s.name = name;
  s.group = group;
  s.kind = Kind<T>::value;
  s.help = help;
  s.set = [member](ParsedArguments& p, const nlohmann::json& v) {
    // null for a field that cannot be unset means "not set" (HF's JSON dumps
    // write e.g. "warmup_ratio": null): the value below stays.
    if constexpr (!is_optional<T>::value) {
      if (v.is_null()) return;
    }
    part<Part>(p).*member = Kind<T>::convert(v);
  };
  s.get = [member](const ParsedArguments& p) { return as_json(part<Part>(p).*member); };
  s.part = part_of<Part>();
  return s;
}

OptionSpec derived(OptionSpec s, const char* default_text) {
  s.derived_default = default_text;
  return s;
}

// lr_scheduler_kwargs: HF's dict, given as a JSON object in a config file or
// as JSON text on the command line; the keys are checked by the schedule
// (optim/lr_schedule.cpp), which knows which ones each type takes.
OptionSpec lr_scheduler_kwargs_option() {
  OptionSpec s;
  s.name = "lr_scheduler_kwargs";
  s.group = OptionGroup::Training;
  s.kind = ValueKind::String;
  s.help = "The schedule's options as a JSON object, e.g. {\"num_cycles\": 2} (cosine_with_restarts)";
  s.set = [](ParsedArguments& p, const nlohmann::json& v) {
    nlohmann::json value = v;
    if (value.is_string()) {
      const std::string text = trim(value.get<std::string>());
      value = text.empty() || is_null_text(text) ? nlohmann::json::object()
                                                 : nlohmann::json::parse(text, nullptr, false);
      if (value.is_discarded()) throw ValueError("expected a JSON object, got " + describe_value(v));
    }
    if (value.is_null()) value = nlohmann::json::object();
    if (!value.is_object()) throw ValueError("expected a JSON object, got " + describe_value(v));
    p.training.lr_scheduler_kwargs = std::move(value);
  };
  s.get = [](const ParsedArguments& p) { return p.training.lr_scheduler_kwargs; };
  return s;
}

// include_num_input_tokens_seen: a boolean, or HF v5's "no" / "all" /
// "non_padding" (the built-in data has no padding, so both count every token).
OptionSpec tokens_seen_option() {
  OptionSpec s = field("include_num_input_tokens_seen", OptionGroup::LogEvalSave,
                       &TrainingArguments::include_num_input_tokens_seen,
                       "Count the input tokens (rows of tabular data) seen, summed over processes; logged as "
                       "num_input_tokens_seen (true/false, or HF's no/all/non_padding)");
  auto as_bool = s.set;
  s.set = [as_bool](ParsedArguments& p, const nlohmann::json& v) {
    if (v.is_string()) {
      const std::string t = lower(trim(v.get<std::string>()));
      if (t == "all" || t == "non_padding") {
        p.training.include_num_input_tokens_seen = true;
        return;
      }
    }
    as_bool(p, v);
  };
  return s;
}

OptionSpec plugin_config_option() {
  OptionSpec s;
  s.name = "plugin_config";
  s.group = OptionGroup::Integrations;
  s.kind = ValueKind::PluginConfig;
  s.help = "A callback's setting (value: JSON if it parses, else text) or name={...}; repeatable";
  s.set = [](ParsedArguments& p, const nlohmann::json& v) {
    if (!v.is_object())
      throw ValueError("expected an object {\"<callback>\": {...}}, got " + describe_value(v));
    for (const auto& [name, section] : v.items()) {
      if (!section.is_object())
        throw ValueError("expected an object for callback \"" + name + "\", got " + describe_value(section));
    }
    if (!p.training.plugin_config.is_object()) p.training.plugin_config = nlohmann::json::object();
    merge_json_objects(p.training.plugin_config, v);
  };
  s.get = [](const ParsedArguments& p) {
    return p.training.plugin_config.is_null() ? nlohmann::json::object() : p.training.plugin_config;
  };
  return s;
}

// debug: HF's space-separated list of DebugOption names ("underflow_overflow
// tpu_metrics_debug"), or a list in a config file; written as a list, as HF does.
OptionSpec debug_option() {
  OptionSpec s;
  s.name = "debug";
  s.group = OptionGroup::Reproducibility;
  s.kind = ValueKind::String;
  s.help =
      "Debug features, space-separated: underflow_overflow (stop at the first inf/nan in the loss, a "
      "parameter or a gradient and print their abs min/max over the last 21 steps; activations are out "
      "of reach: LibTorch modules have no forward hooks)";
  s.set = [](ParsedArguments& p, const nlohmann::json& v) {
    std::vector<std::string> words;
    auto add = [&words](const std::string& text) {
      std::string word;
      for (const char c : text + " ") {
        if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
          if (!word.empty()) words.push_back(word);
          word.clear();
        } else {
          word += c;
        }
      }
    };
    if (v.is_null()) return;
    if (v.is_string()) {
      add(v.get<std::string>());
    } else if (v.is_array()) {
      for (const auto& item : v) {
        if (!item.is_string()) throw ValueError("expected debug option names, got " + describe_value(v));
        add(item.get<std::string>());
      }
    } else {
      throw ValueError("expected debug option names (a space-separated string or a list), got " +
                       describe_value(v));
    }
    std::vector<std::string> out;
    for (const auto& w : words) {
      if (w == "tpu_metrics_debug")
        throw ValueError(
            "'tpu_metrics_debug' is not applicable: TPUs are not supported (only underflow_overflow)");
      if (w != "underflow_overflow")
        throw ValueError("unknown debug option '" + w + "' (expected underflow_overflow)");
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
    p.training.debug = std::move(out);
  };
  s.get = [](const ParsedArguments& p) { return nlohmann::json(p.training.debug); };
  return s;
}

std::vector<OptionSpec> build_table() {
  using G = OptionGroup;
  using TA = TrainingArguments;
  using MA = ModelArguments;
  using DA = DataArguments;
  std::vector<OptionSpec> t;
  // -- Output
  t.push_back(field("output_dir", G::Output, &TA::output_dir,
                    "Folder for checkpoints, training_args.json, metrics and logs"));
  t.push_back(field("overwrite_output_dir", G::Output, &TA::overwrite_output_dir,
                    "Allow an output_dir that already holds checkpoints"));
  t.push_back(
      derived(field("run_name", G::Output, &TA::run_name, "Name of the run for loggers"), "output_dir"));
  t.push_back(field("do_train", G::Output, &TA::do_train, "Train"));
  t.push_back(field("do_eval", G::Output, &TA::do_eval,
                    "Evaluate on the validation set (set when eval_strategy is not no)"));
  t.push_back(field("do_predict", G::Output, &TA::do_predict, "Predict on the test set"));
  // -- Training
  t.push_back(field("per_device_train_batch_size", G::Training, &TA::per_device_train_batch_size,
                    "Training batch size per process"));
  t.push_back(field("per_device_eval_batch_size", G::Training, &TA::per_device_eval_batch_size,
                    "Evaluation/prediction batch size per process"));
  t.push_back(field("gradient_accumulation_steps", G::Training, &TA::gradient_accumulation_steps,
                    "Micro-batches whose gradients are summed before one optimizer step"));
  t.push_back(field("learning_rate", G::Training, &TA::learning_rate, "Initial learning rate"));
  t.push_back(field("weight_decay", G::Training, &TA::weight_decay, "Weight decay (decoupled for AdamW)"));
  t.push_back(field("adam_beta1", G::Training, &TA::adam_beta1, "AdamW beta1"));
  t.push_back(field("adam_beta2", G::Training, &TA::adam_beta2, "AdamW beta2"));
  t.push_back(field("adam_epsilon", G::Training, &TA::adam_epsilon, "AdamW epsilon"));
  t.push_back(field("max_grad_norm", G::Training, &TA::max_grad_norm,
                    "Clip the gradients' global norm to this (0 = no clipping)"));
  t.push_back(field(
      "optim", G::Training, &TA::optim,
      "Optimizer: adamw_torch_fused (AdamW in one fused kernel; the default on LibTorch >= 2.8, as HF's), "
      "adamw_torch (alias adamw), sgd, adagrad or rmsprop"));
  t.push_back(field("optim_args", G::Training, &TA::optim_args,
                    "Optimizer options as key=value,... (adamw_torch, adamw_torch_fused: amsgrad; sgd: "
                    "momentum, dampening, "
                    "nesterov; adagrad: lr_decay, initial_accumulator_value, eps; rmsprop: alpha, eps, "
                    "momentum, centered)"));
  t.push_back(field("num_train_epochs", G::Training, &TA::num_train_epochs,
                    "Epochs to train (fractional allowed); ignored when max_steps > 0"));
  t.push_back(field("max_steps", G::Training, &TA::max_steps,
                    "Optimizer steps to train; > 0 overrides num_train_epochs, -1 = use epochs"));
  t.push_back(field("lr_scheduler_type", G::Training, &TA::lr_scheduler_type,
                    "Schedule: linear, cosine, cosine_with_restarts, polynomial, constant, "
                    "constant_with_warmup, inverse_sqrt, cosine_with_min_lr, warmup_stable_decay or "
                    "reduce_lr_on_plateau (torch's ReduceLROnPlateau on metric_for_best_model, default loss, "
                    "at each evaluation; needs an eval_strategy; kwargs mode (min), factor (0.1), patience "
                    "(10), threshold (1e-4), threshold_mode (rel), cooldown (0), min_lr (0), eps (1e-8))"));
  t.push_back(lr_scheduler_kwargs_option());
  t.push_back(field("warmup_ratio", G::Training, &TA::warmup_ratio,
                    "Warmup as a fraction of max_steps (used when warmup_steps is 0)"));
  t.push_back(field("warmup_steps", G::Training, &TA::warmup_steps,
                    "Linear warmup steps; < 1 is a ratio of max_steps"));
  t.push_back(field("label_smoothing_factor", G::Training, &TA::label_smoothing_factor,
                    "Label smoothing of the cross-entropy loss (0 = none)"));
  t.push_back(tokens_seen_option());
  t.push_back(field("include_tokens_per_second", G::LogEvalSave, &TA::include_tokens_per_second,
                    "Add train_tokens_per_second to the train metrics: input tokens (rows of tabular data) "
                    "trained on in this run, summed over processes, per second of train_runtime"));
  t.push_back(field("use_cpu", G::Training, &TA::use_cpu,
                    "Train on the CPU even where LibTorch has CUDA and a GPU is present (else the model, its "
                    "optimizer state and every batch go to cuda:LOCAL_RANK)"));
  t.push_back(field("bf16", G::Training, &TA::bf16,
                    "bfloat16 mixed precision: forward and loss under autocast, in training and evaluation; "
                    "weights, optimizer state and checkpoints stay float32 (on CPUs without bfloat16 "
                    "instructions it can be slower than float32)"));
  t.push_back(field("fp16", G::Training, &TA::fp16,
                    "float16 mixed precision on a CUDA GPU: autocast to float16 and loss scaling (a gradient "
                    "scaler: steps with inf/NaN gradients are skipped and logged as skipped_steps); refused "
                    "on the CPU, where --bf16 is the choice"));
  // -- Logging / evaluation / saving
  t.push_back(
      field("logging_strategy", G::LogEvalSave, &TA::logging_strategy, "When to log: no, steps or epoch"));
  t.push_back(field("logging_steps", G::LogEvalSave, &TA::logging_steps,
                    "Log every N steps (logging_strategy steps); < 1 is a ratio of max_steps"));
  t.push_back(
      field("logging_first_step", G::LogEvalSave, &TA::logging_first_step, "Also log the first step"));
  t.push_back(field("eval_on_start", G::LogEvalSave, &TA::eval_on_start,
                    "Evaluate once before the first training step"));
  t.push_back(field("logging_nan_inf_filter", G::LogEvalSave, &TA::logging_nan_inf_filter,
                    "Leave nan/inf losses out of the logged average"));
  t.push_back(
      field("eval_strategy", G::LogEvalSave, &TA::eval_strategy, "When to evaluate: no, steps or epoch"));
  t.push_back(derived(field("eval_steps", G::LogEvalSave, &TA::eval_steps,
                            "Evaluate every N steps (eval_strategy steps); < 1 is a ratio of max_steps"),
                      "logging_steps"));
  t.push_back(field("eval_delay", G::LogEvalSave, &TA::eval_delay,
                    "Epochs or steps (per eval_strategy) to wait before the first evaluation"));
  t.push_back(field("save_strategy", G::LogEvalSave, &TA::save_strategy,
                    "When to save a checkpoint: no, steps, epoch or best (on a new best metric)"));
  t.push_back(field("save_steps", G::LogEvalSave, &TA::save_steps,
                    "Save every N steps (save_strategy steps); < 1 is a ratio of max_steps"));
  t.push_back(field("save_total_limit", G::LogEvalSave, &TA::save_total_limit,
                    "Keep at most N checkpoints (the best one is never deleted); unset = keep all"));
  t.push_back(field("load_best_model_at_end", G::LogEvalSave, &TA::load_best_model_at_end,
                    "Load the best checkpoint when training ends (needs matching eval/save strategies)"));
  t.push_back(derived(field("metric_for_best_model", G::LogEvalSave, &TA::metric_for_best_model,
                            "Metric that picks the best checkpoint"),
                      "loss, when load_best_model_at_end or save_strategy best"));
  t.push_back(derived(
      field("greater_is_better", G::LogEvalSave, &TA::greater_is_better, "Whether a larger metric is better"),
      "false when the metric's name ends in loss, else true"));
  t.push_back(field("resume_from_checkpoint", G::LogEvalSave, &TA::resume_from_checkpoint,
                    "Checkpoint folder to resume from, or true = the latest in output_dir"));
  t.push_back(
      field("save_safetensors", G::LogEvalSave, &TA::save_safetensors,
            "Also write the weights as model.safetensors (state-dict names) in checkpoints and output_dir"));
  t.push_back(field("skip_memory_metrics", G::LogEvalSave, &TA::skip_memory_metrics,
                    "Skip the memory (RSS) deltas in the metrics"));
  t.push_back(field("enable_jit_checkpoint", G::LogEvalSave, &TA::enable_jit_checkpoint,
                    "HF's checkpoint on SIGTERM: trainhook always saves a checkpoint and stops at the end of "
                    "the current step on the first SIGTERM or SIGINT, so true or false changes nothing"));
  // -- Reproducibility and data loading
  t.push_back(field("seed", G::Reproducibility, &TA::seed, "Random seed set at the start of training"));
  t.push_back(
      derived(field("data_seed", G::Reproducibility, &TA::data_seed, "Seed of the data order"), "seed"));
  t.push_back(field("full_determinism", G::Reproducibility, &TA::full_determinism,
                    "Deterministic algorithms only (identical results, maybe slower)"));
  t.push_back(debug_option());
  t.push_back(field("dataloader_drop_last", G::Reproducibility, &TA::dataloader_drop_last,
                    "Drop the last incomplete training batch"));
  t.push_back(field("dataloader_num_workers", G::Reproducibility, &TA::dataloader_num_workers,
                    "Threads that prepare training batches ahead of the step (0: the training thread); "
                    "the batches and their order do not change"));
  t.push_back(derived(field("dataloader_prefetch_factor", G::Reproducibility, &TA::dataloader_prefetch_factor,
                            "Batches prepared ahead per worker (needs dataloader_num_workers > 0)"),
                      "2 with workers"));
  t.push_back(field("dataloader_pin_memory", G::Reproducibility, &TA::dataloader_pin_memory,
                    "Pin prepared batches for the copy to a CUDA device (a warning on the CPU)"));
  t.push_back(field("group_by_length", G::Reproducibility, &TA::group_by_length,
                    "Batches of samples of similar length (HF's LengthGroupedSampler), from the "
                    "length_column_name tensor of the training data"));
  t.push_back(field("length_column_name", G::Reproducibility, &TA::length_column_name,
                    "The per-sample length tensor (or .npy file) group_by_length reads"));
  t.push_back(field("disable_tqdm", G::Reproducibility, &TA::disable_tqdm,
                    "Print logs instead of showing progress bars"));
  // -- Integrations and plugins
  t.push_back(field("report_to", G::Integrations, &TA::report_to,
                    "Integrations to report to: none, all, or names (tensorboard, mlflow, ...)"));
  t.push_back(
      field("callbacks", G::Integrations, &TA::callbacks, "Further callbacks by name (from plugins)"));
  t.push_back(field("plugin_dir", G::Integrations, &TA::plugin_dir,
                    "Folders searched for plugins before TRAINHOOK_PLUGIN_PATH and the default"));
  t.push_back(plugin_config_option());
  t.push_back(
      field("plugin_isolation", G::Integrations, &TA::plugin_isolation,
            "Which plugin callbacks run each in its own helper process (a crash, hang or exit of "
            "theirs is named and does not end the run; no model tensors): auto (the default, else the "
            "site file's): the trainer's own, trusted-folder and pinned plugins in process, the rest "
            "isolated; none: all in process; or callback names (only those isolated); "
            "--plugin_config NAME.isolation=process|in_process wins"));
  t.push_back(field("plugin_error_policy", G::Integrations, &TA::plugin_error_policy,
                    "A plugin that fails at run time: disable (it, with a warning) or fail (the run)"));
  t.push_back(field("callback_end_timeout", G::Integrations, &TA::callback_end_timeout,
                    "Seconds each callback's on_train_end may take (integrations flushing) before the "
                    "run names it and exits with the final model saved; 0 = wait forever"));
  t.push_back(derived(field("requeue_signal", G::MultiProcess, &TA::requeue_signal,
                            "Signal that saves a checkpoint at the end of the step, then requeues the Slurm "
                            "job (scontrol requeue, under SLURM_JOB_ID) and exits 75: USR1, USR2, HUP, "
                            "ALRM, URG, XCPU, XFSZ, VTALRM, PROF, or none"),
                      "TRAINHOOK_REQUEUE_SIGNAL, else USR1"));
  t.push_back(field("profile", G::Integrations, &TA::profile,
                    "Time each phase of the step and each callback per event, per rank: none, simple "
                    "(a table and profile.json in output_dir), trace (also trace.json, a Chrome trace), "
                    "ops (also LibTorch's operator profile)"));
  t.push_back(field("allow_unsafe_plugin_paths", G::Integrations, &TA::allow_unsafe_plugin_paths,
                    "Load plugins from world-writable or foreign-owned folders"));
  t.push_back(field("allow_duplicate_plugins", G::Integrations, &TA::allow_duplicate_plugins,
                    "Two plugins with one callback name: use the first found instead of failing"));
  // -- Multi-process (normally set by the launcher)
  t.push_back(field("process_index", G::MultiProcess, &TA::process_index, "Index of this process"));
  t.push_back(field("world_size", G::MultiProcess, &TA::world_size, "Number of processes"));
  t.push_back(field("local_rank", G::MultiProcess, &TA::local_rank,
                    "Rank of this process on its machine (LOCAL_RANK from the launcher wins)"));
  t.push_back(derived(field("ddp_backend", G::MultiProcess, &TA::ddp_backend,
                            "Collective back end of a multi-process run: gloo or nccl"),
                      "gloo"));
  t.push_back(field("ddp_timeout", G::MultiProcess, &TA::ddp_timeout,
                    "Seconds the rendezvous or a collective may take before every rank fails"));
  t.push_back(field("ddp_gradient_reduction", G::MultiProcess, &MA::ddp_gradient_reduction,
                    "Gradients are all-reduced while backward runs (overlap) or after it (after_backward)"));
  // -- Model
  t.push_back(field("model", G::Model, &MA::model, "Built-in model: mlp, cnn or char_transformer"));
  t.push_back(field("model_name_or_path", G::Model, &MA::model_name_or_path,
                    "A TorchScript archive (torch.jit.save) to train instead of --model"));
  t.push_back(field("loss", G::Model, &MA::loss,
                    "Loss of a TorchScript model whose forward returns no loss: cross_entropy, mse, "
                    "bce_with_logits or l1"));
  t.push_back(field("hidden_size", G::Model, &MA::hidden_size, "Width of the hidden layers / embeddings"));
  t.push_back(field("num_layers", G::Model, &MA::num_layers, "Number of hidden layers / transformer blocks"));
  t.push_back(field("num_heads", G::Model, &MA::num_heads, "Attention heads (char_transformer)"));
  t.push_back(field("dropout", G::Model, &MA::dropout, "Dropout probability"));
  t.push_back(derived(field("vocab_size", G::Model, &MA::vocab_size,
                            "char_transformer on token files (.bin): the vocabulary size"),
                      "the largest token id of the training files + 1"));
  // -- Data
  t.push_back(field(
      "train_file", G::Data, &DA::train_file,
      "Training data: .csv (features + label), .txt (character LM), .pt (tensors), .bin (token ids; a glob "
      "such as shard_*.bin joins shards) or a folder of .npy arrays (input.npy, labels.npy)"));
  t.push_back(field("validation_file", G::Data, &DA::validation_file, "Validation data, same format"));
  t.push_back(field("test_file", G::Data, &DA::test_file, "Test data for --do_predict, same format"));
  t.push_back(field("label_column", G::Data, &DA::label_column,
                    "CSV label column: first, last, a header name or a 0-based index"));
  t.push_back(field("csv_header", G::Data, &DA::csv_header, "The first CSV row is a header"));
  t.push_back(
      field("label_column_name", G::Data, &DA::label_column_name,
            "CSV label column by header name (implies csv_header; default: label when the header has it)"));
  t.push_back(field("validation_split_percentage", G::Data, &DA::validation_split_percentage,
                    "Percent of the training data held out for validation when no validation_file"));
  t.push_back(field("block_size", G::Data, &DA::block_size,
                    "Context length of the character LM and of token files (windows of block_size + 1)"));
  t.push_back(
      field("token_dtype", G::Data, &DA::token_dtype, "The id type of .bin token files: uint16 or uint32"));
  t.push_back(derived(field("image_size", G::Data, &DA::image_size, "cnn: side of the square images"),
                      "the square root of the feature count"));
  t.push_back(field("feature_scale", G::Data, &DA::feature_scale, "Features are multiplied by this"));
  return t;
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = build_table();
  return table;
}

const OptionSpec* find_option(const std::string& name) {
  for (const auto& o : option_table())
    if (o.name == name) return &o;
  return nullptr;
}

nlohmann::json part_to_json(const ParsedArguments& p, ArgumentPart part) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& o : option_table())
    if (o.part == part) j[o.name] = o.get(p);
  return j;
}

std::vector<std::string> option_names() {
  std::vector<std::string> names;
  for (const auto& o : option_table()) names.push_back(o.name);
  return names;
}

const char* group_title(OptionGroup g) {
  switch (g) {
    case OptionGroup::Output:
      return "Output";
    case OptionGroup::Training:
      return "Training";
    case OptionGroup::LogEvalSave:
      return "Logging, evaluation and saving";
    case OptionGroup::Reproducibility:
      return "Reproducibility and data loading";
    case OptionGroup::Integrations:
      return "Integrations and plugins";
    case OptionGroup::MultiProcess:
      return "Multi-process (set by a launcher)";
    case OptionGroup::Model:
      return "Model";
    case OptionGroup::Data:
      return "Data";
  }
  return "";
}

bool parse_bool_literal(const std::string& text, bool& out) {
  const std::string t = lower(trim(text));
  if (t == "true" || t == "1" || t == "yes" || t == "y" || t == "t" || t == "on") {
    out = true;
    return true;
  }
  if (t == "false" || t == "0" || t == "no" || t == "n" || t == "f" || t == "off") {
    out = false;
    return true;
  }
  return false;
}

bool is_bool_literal(const std::string& text) {
  bool ignored = false;
  return parse_bool_literal(text, ignored);
}

std::string describe_value(const nlohmann::json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

void merge_json_objects(nlohmann::json& target, const nlohmann::json& patch) {
  if (!target.is_object() || !patch.is_object()) {
    target = patch;
    return;
  }
  for (const auto& [key, value] : patch.items()) {
    auto it = target.find(key);
    if (it != target.end() && it->is_object() && value.is_object()) {
      merge_json_objects(*it, value);
    } else {
      target[key] = value;
    }
  }
}

nlohmann::json parse_plugin_config_assignment(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos)
    throw ValueError("expected name.key=value or name={...}, got \"" + text + "\" (no '=')");
  const std::string path = trim(text.substr(0, eq));
  const std::string raw = text.substr(eq + 1);
  nlohmann::json value = nlohmann::json::parse(raw, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) value = raw;  // not JSON: the text itself

  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& k : keys) {
    if (k.empty()) throw ValueError("expected name.key=value, got \"" + text + "\" (an empty name or key)");
  }
  if (keys.size() == 1 && !value.is_object())
    throw ValueError("expected name.key=value, or name={...} with a JSON object, got \"" + text + "\"");
  nlohmann::json nested = std::move(value);
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    nlohmann::json wrap = nlohmann::json::object();
    wrap[*it] = std::move(nested);
    nested = std::move(wrap);
  }
  return nested;
}

}  // namespace trainhook::detail
