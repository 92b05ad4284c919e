// validate(): the rules of HF TrainingArguments.__post_init__/_validate_args that
// apply to trainhook, plus range checks of our own. Every message names the
// flag(s) at fault, the value given and what is expected.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/args/report_to_rules.hpp>
#include <trainhook/common/requeue_signal.hpp>
#include <trainhook/strings.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string_view>

namespace trainhook {
namespace {

std::string number(double d) {
  std::ostringstream os;
  os << d;
  return os.str();
}

using strings::ends_with;
using strings::join;

void fail(const std::string& message) { throw ArgumentError(message); }

void check_at_least(const char* flag, double value, double minimum, const char* what = "") {
  if (value < minimum)
    fail(std::string("--") + flag + ": expected a value >= " + number(minimum) + what + ", got " +
         number(value));
}

// HF: an interval in (0, 1) is a ratio of max_steps; above 1 it must be a
// whole number of steps when its strategy counts steps (HF checks only then).
void check_interval(const char* flag, double value, bool counts_steps) {
  if (value < 0)
    fail(std::string("--") + flag + ": expected a step count (>= 1) or a ratio in (0, 1), got " +
         number(value));
  if (counts_steps && value > 1 && value != std::floor(value))
    fail(std::string("--") + flag +
         ": must be a whole number when bigger than 1 (a ratio of max_steps when below 1), got " +
         number(value));
}

void check_names(const char* flag, const std::vector<std::string>& names) {
  for (const auto& n : names)
    if (n.empty()) fail(std::string("--") + flag + ": an empty name in the list");
}

void validate_report_to(std::vector<std::string>& report_to) {
  check_names("report_to", report_to);
  if (report_to.empty()) {
    report_to = {"none"};
    return;
  }
  if (const std::string problem = report_to_list_problem(report_to); !problem.empty())
    fail("--report_to: " + problem);
}

// Where the first byte that breaks UTF-8 is, or npos. Overlong forms,
// surrogates and code points past U+10FFFF are invalid, as JSON writers say.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return i;
    }
    for (size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3F);
    }
    const uint32_t min[] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += n + 1;
  }
  return std::string_view::npos;
}

// Arguments go into training_args.json and to every integration as JSON text,
// which must be UTF-8; a Latin-1 run name or folder name is refused here,
// naming the flag, rather than failing later inside a JSON writer.
void check_utf8(const std::string& flag, const std::string& value) {
  const size_t at = invalid_utf8_at(value);
  if (at == std::string_view::npos) return;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(value[at])));
  fail("--" + flag + ": not valid UTF-8 text (byte " + byte + " at position " + std::to_string(at + 1) +
       "); arguments are written to training_args.json and sent to integrations as UTF-8, so give this "
       "value (a name or a path) in UTF-8");
}

void check_utf8(const std::string& flag, const std::optional<std::string>& value) {
  if (value) check_utf8(flag, *value);
}

void check_utf8(const std::string& flag, const std::vector<std::string>& values) {
  for (const auto& v : values) check_utf8(flag, v);
}

// flag "plugin_config", path "mlflow.tracking_uri": "--plugin_config mlflow.tracking_uri: ...".
void check_utf8_json(const std::string& flag, const nlohmann::json& v, const std::string& path = "") {
  const std::string name = path.empty() ? flag : flag + " " + path;
  if (v.is_string()) {
    check_utf8(name, v.get_ref<const std::string&>());
  } else if (v.is_object()) {
    for (const auto& [key, item] : v.items()) {
      check_utf8(name + " (a key)", key);
      check_utf8_json(flag, item, path.empty() ? key : path + "." + key);
    }
  } else if (v.is_array()) {
    for (const auto& item : v) check_utf8_json(flag, item, path);
  }
}

// Step counts and intervals become 64-bit integers (steps, epochs x steps per
// epoch); past these bounds they overflow and a run "trains" 0 steps.
constexpr double kMaxEpochs = 1e9;
constexpr double kMaxStepCount = 1e15;

void check_count(const char* flag, double value, double maximum) {
  if (!(value <= maximum))
    fail(std::string("--") + flag + ": " + number(value) + " is too large (at most " + number(maximum) +
         "; step counts beyond that overflow)");
}

}  // namespace

void validate(TrainingArguments& a) {
  check_utf8("output_dir", a.output_dir);
  check_utf8("run_name", a.run_name);
  check_utf8("metric_for_best_model", a.metric_for_best_model);
  check_utf8("resume_from_checkpoint", a.resume_from_checkpoint);
  check_utf8("report_to", a.report_to);
  check_utf8("callbacks", a.callbacks);
  check_utf8("plugin_dir", a.plugin_dir);
  check_utf8("plugin_isolation", a.plugin_isolation);
  check_utf8_json("plugin_config", a.plugin_config);
  check_count("num_train_epochs", a.num_train_epochs, kMaxEpochs);
  check_count("max_steps", static_cast<double>(a.max_steps), kMaxStepCount);
  check_count("logging_steps", a.logging_steps, kMaxStepCount);
  check_count("save_steps", a.save_steps, kMaxStepCount);
  check_count("warmup_steps", a.warmup_steps, kMaxStepCount);
  if (a.eval_steps) check_count("eval_steps", *a.eval_steps, kMaxStepCount);

  // -- output
  if (a.output_dir.empty()) fail("--output_dir: must not be empty");
  if (!a.run_name || a.run_name->empty()) a.run_name = a.output_dir;

  // -- batches and optimisation
  check_at_least("per_device_train_batch_size", static_cast<double>(a.per_device_train_batch_size), 1);
  check_at_least("per_device_eval_batch_size", static_cast<double>(a.per_device_eval_batch_size), 1);
  check_at_least("gradient_accumulation_steps", static_cast<double>(a.gradient_accumulation_steps), 1);
  check_at_least("learning_rate", a.learning_rate, 0);
  check_at_least("weight_decay", a.weight_decay, 0);
  if (a.adam_beta1 < 0 || a.adam_beta1 >= 1)
    fail("--adam_beta1: expected a value in [0, 1), got " + number(a.adam_beta1));
  if (a.adam_beta2 < 0 || a.adam_beta2 >= 1)
    fail("--adam_beta2: expected a value in [0, 1), got " + number(a.adam_beta2));
  check_at_least("adam_epsilon", a.adam_epsilon, 0);
  check_at_least("max_grad_norm", a.max_grad_norm, 0, " (0 = no clipping)");
  if (a.max_steps == 0 || a.max_steps < -1)
    fail("--max_steps: expected a positive step count, or -1 to train num_train_epochs, got " +
         std::to_string(a.max_steps));
  if (a.max_steps < 0 && !(a.num_train_epochs > 0))
    fail("--num_train_epochs: expected a value > 0 when --max_steps is not set, got " +
         number(a.num_train_epochs));
  check_at_least("num_train_epochs", a.num_train_epochs, 0);
  check_at_least("dataloader_num_workers", static_cast<double>(a.dataloader_num_workers), 0);
  if (a.dataloader_prefetch_factor) {
    // As torch's DataLoader: a prefetch depth means nothing without workers.
    if (a.dataloader_num_workers == 0)
      fail("--dataloader_prefetch_factor: only used with --dataloader_num_workers > 0");
    check_at_least("dataloader_prefetch_factor", static_cast<double>(*a.dataloader_prefetch_factor), 1);
  }
  if (a.group_by_length && a.length_column_name.empty())
    fail("--length_column_name: must name the length tensor when --group_by_length is set");
  if (a.warmup_ratio < 0 || a.warmup_ratio > 1)
    fail("--warmup_ratio: expected a value in [0, 1], got " + number(a.warmup_ratio));
  check_interval("warmup_steps", a.warmup_steps, true);

  // -- logging / evaluation / saving
  check_interval("logging_steps", a.logging_steps, a.logging_strategy == IntervalStrategy::steps);
  if (a.logging_strategy == IntervalStrategy::steps && a.logging_steps == 0)
    fail("--logging_strategy steps requires a non-zero --logging_steps");
  if (a.eval_strategy != IntervalStrategy::no) a.do_eval = true;
  if (a.eval_steps) check_interval("eval_steps", *a.eval_steps, a.eval_strategy == IntervalStrategy::steps);
  if (a.eval_strategy == IntervalStrategy::steps && (!a.eval_steps || *a.eval_steps == 0)) {
    if (a.logging_steps > 0) {
      check_interval("logging_steps (the default of --eval_steps)", a.logging_steps, true);
      a.eval_steps = a.logging_steps;
    } else {
      fail("--eval_strategy steps requires a non-zero --eval_steps or --logging_steps");
    }
  }
  check_at_least("eval_delay", a.eval_delay, 0);
  check_interval("save_steps", a.save_steps, a.save_strategy == SaveStrategy::steps);
  if (a.save_strategy == SaveStrategy::steps && a.save_steps == 0)
    fail("--save_strategy steps requires a non-zero --save_steps");
  if (a.save_total_limit && *a.save_total_limit < 1)
    fail("--save_total_limit: expected a value >= 1 (or unset to keep every checkpoint), got " +
         std::to_string(*a.save_total_limit));

  if (a.load_best_model_at_end && a.save_strategy != SaveStrategy::best) {
    if (std::string_view(enum_name(a.eval_strategy)) != enum_name(a.save_strategy))
      fail(
          "--load_best_model_at_end requires the save and eval strategy to match (unless --save_strategy "
          "best), "
          "but found --eval_strategy " +
          std::string(enum_name(a.eval_strategy)) + " and --save_strategy " + enum_name(a.save_strategy));
    if (a.eval_strategy == IntervalStrategy::steps) {
      const double save = a.save_steps, eval = *a.eval_steps;
      if ((save < 1) != (eval < 1))
        fail(
            "--load_best_model_at_end requires --save_steps to be a multiple of --eval_steps, which cannot "
            "be "
            "guaranteed when mixing a ratio and a step count: --save_steps " +
            number(save) + ", --eval_steps " + number(eval));
      // Ratios: compare in millionths so 0.2 / 0.1 is not spoilt by rounding.
      const auto scaled = [](double v) { return static_cast<int64_t>(std::llround(v * 1000000.0)); };
      const bool multiple = save < 1 ? scaled(eval) > 0 && scaled(save) % scaled(eval) == 0
                                     : static_cast<int64_t>(save) % static_cast<int64_t>(eval) == 0;
      if (!multiple)
        fail(
            "--load_best_model_at_end requires --save_steps to be a multiple of --eval_steps, but found "
            "--save_steps " +
            number(save) + " and --eval_steps " + number(eval));
    }
  }
  if (a.save_strategy == SaveStrategy::best && a.eval_strategy == IntervalStrategy::no)
    fail(
        "--save_strategy best saves when an evaluation finds a new best metric, so it requires "
        "--eval_strategy steps or epoch (got no)");
  if (a.metric_for_best_model && a.metric_for_best_model->empty())
    fail("--metric_for_best_model: must not be empty");
  // HF (training_args.py): reduce_lr_on_plateau steps on an evaluation metric.
  if (a.lr_scheduler_type == SchedulerType::reduce_lr_on_plateau && a.eval_strategy == IntervalStrategy::no)
    fail(
        "--lr_scheduler_type reduce_lr_on_plateau requires an eval strategy (--eval_strategy steps or "
        "epoch)");
  if ((a.load_best_model_at_end || a.save_strategy == SaveStrategy::best ||
       a.lr_scheduler_type == SchedulerType::reduce_lr_on_plateau) &&
      !a.metric_for_best_model)
    a.metric_for_best_model = "loss";
  if (!a.greater_is_better && a.metric_for_best_model)
    a.greater_is_better = !ends_with(*a.metric_for_best_model, "loss");
  // HF's EarlyStoppingCallback asserts this at train begin; here it stops the
  // run before any work instead of training on without early stopping.
  for (const auto& name : a.callbacks)
    if (name == "early_stopping" && !a.metric_for_best_model)
      fail(
          "--callbacks early_stopping requires --metric_for_best_model (e.g. --metric_for_best_model "
          "eval_loss, or --load_best_model_at_end, which defaults it to loss)");

  if (a.resume_from_checkpoint) {
    const std::string lowered = strings::lower(*a.resume_from_checkpoint);
    if (lowered.empty() || lowered == "false") {
      a.resume_from_checkpoint.reset();
    } else if (lowered == "true") {
      a.resume_from_checkpoint = "true";
    }
  }

  // -- integrations and plugins
  validate_report_to(a.report_to);
  check_names("callbacks", a.callbacks);
  check_names("plugin_dir", a.plugin_dir);
  check_names("plugin_isolation", a.plugin_isolation);
  if (a.plugin_isolation.size() > 1 &&
      std::find(a.plugin_isolation.begin(), a.plugin_isolation.end(), "none") != a.plugin_isolation.end())
    fail(
        "--plugin_isolation: 'none' (every plugin in process) cannot be combined with other values; expected "
        "auto, none, or callback names (optionally after auto)");
  if (a.plugin_config.is_null()) a.plugin_config = nlohmann::json::object();
  if (!a.plugin_config.is_object())
    fail("--plugin_config: expected an object {\"<callback>\": {...}}, got " + a.plugin_config.dump());
  for (const auto& [name, section] : a.plugin_config.items()) {
    if (!section.is_object())
      fail("--plugin_config: the configuration of '" + name + "' must be an object, got " + section.dump());
  }

  if (!(a.callback_end_timeout >= 0 && a.callback_end_timeout <= 1e9))
    fail("--callback_end_timeout: expected seconds in [0, 1e9] (0 = no bound), got " +
         number(a.callback_end_timeout));

  // The requeue signal: the flag, else TRAINHOOK_REQUEUE_SIGNAL (a batch
  // script sets it once for every step), else USR1; kept as its short name.
  {
    std::string from = "--requeue_signal";
    std::string name = a.requeue_signal;
    if (name.empty()) {
      const char* env = std::getenv("TRAINHOOK_REQUEUE_SIGNAL");
      if (env != nullptr && *env != '\0') {
        name = env;
        from = "TRAINHOOK_REQUEUE_SIGNAL";
      } else {
        name = "USR1";
      }
    }
    const int sig = requeue_signal_number(strings::trim(name));
    if (sig < 0)
      fail(from + ": '" + name + "' is not a signal it accepts; expected " + requeue_signal_choices() +
           " (TERM and INT always stop the run with a checkpoint)");
    a.requeue_signal = sig == 0 ? "none" : requeue_signal_name(sig);
  }

  // -- multi-process
  check_at_least("world_size", a.world_size, 1);
  if (a.process_index < 0 || a.process_index >= a.world_size)
    fail("--process_index: expected a value in [0, world_size) = [0, " + std::to_string(a.world_size) +
         "), got " + std::to_string(a.process_index));
  check_at_least("ddp_timeout", static_cast<double>(a.ddp_timeout), 1);
  if (a.local_rank < -1)
    fail("--local_rank: expected -1 (no launcher) or a rank >= 0, got " + std::to_string(a.local_rank));
}

void validate(ModelArguments& m) {
  if (m.model.empty()) fail("--model: must not be empty");
  check_utf8("model", m.model);
  check_at_least("hidden_size", static_cast<double>(m.hidden_size), 1);
  check_at_least("num_layers", static_cast<double>(m.num_layers), 1);
  check_at_least("num_heads", static_cast<double>(m.num_heads), 1);
  if (m.dropout < 0 || m.dropout >= 1)
    fail("--dropout: expected a probability in [0, 1), got " + number(m.dropout));
  if (m.vocab_size && *m.vocab_size < 1)
    fail("--vocab_size: expected a value >= 1, got " + std::to_string(*m.vocab_size));
}

void validate(DataArguments& d) {
  for (auto* f : {&d.train_file, &d.validation_file, &d.test_file}) {
    if (*f && (*f)->empty()) f->reset();
  }
  check_utf8("train_file", d.train_file);
  check_utf8("validation_file", d.validation_file);
  check_utf8("test_file", d.test_file);
  check_utf8("label_column", d.label_column);
  if (d.label_column.empty())
    fail("--label_column: must not be empty (first, last, a header name or an index)");
  if (d.validation_split_percentage < 0 || d.validation_split_percentage >= 100)
    fail("--validation_split_percentage: expected a value in [0, 100), got " +
         number(d.validation_split_percentage));
  check_at_least("block_size", static_cast<double>(d.block_size), 1);
  if (d.token_dtype != "uint16" && d.token_dtype != "uint32")
    fail("--token_dtype: expected uint16 or uint32, got '" + d.token_dtype + "'");
  if (d.image_size && *d.image_size < 1)
    fail("--image_size: expected a value >= 1, got " + std::to_string(*d.image_size));
}

}  // namespace trainhook
