// transformers 4.47.1 optimization.py schedules, as plain functions of the step.
// The arithmetic follows HF's lambdas operation for operation, so the rates agree
// to the last bits (tests/trainer/hf_lr_schedules.py compares every step).
#include <trainhook/optim/lr_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace trainhook {
namespace {

double warmup_factor(int64_t step, int64_t warmup_steps) {
  return static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
}

// HF's cosine lambda after warmup (num_cycles = 0.5: 1 down to 0 once).
double cosine_progress_factor(double progress, double num_cycles) {
  return 0.5 * (1.0 + std::cos(M_PI * num_cycles * 2.0 * progress));
}

LrScheduleOptions default_options(SchedulerType type) {
  LrScheduleOptions o;
  if (type == SchedulerType::cosine_with_restarts) o.num_cycles = 1;  // HF: num_cycles: int = 1
  return o;
}

[[noreturn]] void fail(SchedulerType type, const std::string& key, const std::string& what) {
  throw std::invalid_argument("lr_scheduler_kwargs: '" + key + "' for lr_scheduler_type " + enum_name(type) +
                              ": " + what);
}

double number_value(SchedulerType type, const std::string& key, const nlohmann::json& v) {
  if (!v.is_number()) fail(type, key, "expected a number, got " + v.dump());
  const double d = v.get<double>();
  if (!std::isfinite(d)) fail(type, key, "expected a finite number, got " + v.dump());
  return d;
}

int64_t step_count(SchedulerType type, const std::string& key, const nlohmann::json& v) {
  const double d = number_value(type, key, v);
  if (d < 0 || d != std::floor(d) || d > 1e15)
    fail(type, key, "expected a whole number of steps >= 0, got " + v.dump());
  return static_cast<int64_t>(d);
}

// One of torch's ReduceLROnPlateau arguments; PlateauOptions checks the range.
void set_plateau_option(PlateauOptions& p, const std::string& key, const nlohmann::json& value) {
  constexpr auto type = SchedulerType::reduce_lr_on_plateau;
  const auto choice = [&](const char* a, const char* b) {
    if (!value.is_string() || (value != a && value != b))
      fail(type, key, std::string("expected \"") + a + "\" or \"" + b + "\", got " + value.dump());
    return value == a;
  };
  try {
    if (key == "mode") {
      p.greater_is_better(!choice("min", "max"));
    } else if (key == "threshold_mode") {
      p.relative_threshold(choice("rel", "abs"));
    } else if (key == "patience" || key == "cooldown") {
      const int64_t n = step_count(type, key, value);
      if (key == "patience") p.patience(n);
      if (key == "cooldown") p.cooldown(n);
    } else {
      const double d = number_value(type, key, value);
      if (key == "factor") p.factor(d);
      if (key == "threshold") p.threshold(d);
      if (key == "min_lr") p.min_lr(d);
      if (key == "eps") p.eps(d);
    }
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind("lr_scheduler_kwargs", 0) == 0) throw;
    fail(type, key, what.substr(what.find(": ") + 2));  // PlateauOptions' range message
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<std::string> lr_schedule_keys(SchedulerType type) {
  switch (type) {
    case SchedulerType::cosine:
    case SchedulerType::cosine_with_restarts:
      return {"num_cycles"};
    case SchedulerType::polynomial:
      return {"lr_end", "power"};
    case SchedulerType::cosine_with_min_lr:
      return {"num_cycles", "min_lr", "min_lr_rate"};
    case SchedulerType::warmup_stable_decay:
      return {"num_stable_steps", "num_decay_steps", "min_lr_ratio", "num_cycles", "decay_type"};
    case SchedulerType::reduce_lr_on_plateau:
      return {"mode", "factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr", "eps"};
    case SchedulerType::linear:
    case SchedulerType::constant:
    case SchedulerType::constant_with_warmup:
    case SchedulerType::inverse_sqrt:
      return {};
  }
  return {};
}

LrScheduleOptions lr_schedule_options(SchedulerType type, const nlohmann::json& kwargs_in, double base_lr,
                                      int64_t warmup_steps, int64_t total_steps) {
  nlohmann::json kwargs = kwargs_in;
  if (kwargs.is_string()) {
    // HF accepts the dict as a JSON string (a flag's value).
    kwargs = nlohmann::json::parse(kwargs.get<std::string>(), nullptr, /*allow_exceptions=*/false);
    if (kwargs.is_discarded())
      throw std::invalid_argument("lr_scheduler_kwargs: expected a JSON object, got " + kwargs_in.dump());
  }
  if (kwargs.is_null()) kwargs = nlohmann::json::object();
  if (!kwargs.is_object())
    throw std::invalid_argument("lr_scheduler_kwargs: expected a JSON object, got " + kwargs.dump());

  LrScheduleOptions o = default_options(type);
  o.lr_init = base_lr;
  const auto keys = lr_schedule_keys(type);
  for (const auto& [key, value] : kwargs.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      if (keys.empty())
        fail(type, key, "this schedule takes no lr_scheduler_kwargs (HF's get_scheduler passes it none)");
      fail(type, key, "not an option of this schedule (its options: " + join(keys) + ")");
    }
    if (type == SchedulerType::reduce_lr_on_plateau) {
      set_plateau_option(o.plateau, key, value);
      continue;
    }
    if (key == "decay_type") {
      if (!value.is_string() || (value != "cosine" && value != "linear" && value != "1-sqrt"))
        fail(type, key, "expected one of cosine, linear, 1-sqrt, got " + value.dump());
      o.decay_type = value.get<std::string>();
    } else if (key == "num_stable_steps") {
      o.num_stable_steps = step_count(type, key, value);
    } else if (key == "num_decay_steps") {
      o.num_decay_steps = step_count(type, key, value);
    } else if (key == "num_cycles") {
      o.num_cycles = number_value(type, key, value);
    } else if (key == "lr_end") {
      o.lr_end = number_value(type, key, value);
    } else if (key == "power") {
      o.power = number_value(type, key, value);
    } else if (key == "min_lr_ratio") {
      o.min_lr_ratio = number_value(type, key, value);
    }
    // min_lr / min_lr_rate below, together.
  }

  if (type == SchedulerType::polynomial && !(base_lr > o.lr_end)) {
    fail(type, "lr_end",
         "lr_end (" + nlohmann::json(o.lr_end).dump() + ") must be smaller than learning_rate (" +
             nlohmann::json(base_lr).dump() + ")");
  }
  if (type == SchedulerType::cosine_with_min_lr) {
    const bool has_lr = kwargs.contains("min_lr"), has_rate = kwargs.contains("min_lr_rate");
    if (has_lr && has_rate) fail(type, "min_lr", "set only one of min_lr or min_lr_rate");
    if (!has_lr && !has_rate) {
      throw std::invalid_argument(
          "lr_scheduler_kwargs: lr_scheduler_type cosine_with_min_lr needs one of min_lr or min_lr_rate, "
          "e.g. --lr_scheduler_kwargs '{\"min_lr_rate\": 0.1}'");
    }
    if (has_lr) {
      if (!(base_lr > 0)) fail(type, "min_lr", "needs learning_rate > 0 (min_lr is divided by it)");
      o.min_lr_rate = number_value(type, "min_lr", kwargs["min_lr"]) / base_lr;
    } else {
      o.min_lr_rate = number_value(type, "min_lr_rate", kwargs["min_lr_rate"]);
    }
  }
  if (type == SchedulerType::warmup_stable_decay) {
    if (!kwargs.contains("num_decay_steps")) {
      throw std::invalid_argument(
          "lr_scheduler_kwargs: lr_scheduler_type warmup_stable_decay needs num_decay_steps, e.g. "
          "--lr_scheduler_kwargs '{\"num_stable_steps\": 80, \"num_decay_steps\": 20}'");
    }
    if (!kwargs.contains("num_stable_steps")) {
      // transformers >= 4.49: the steps left between warmup and decay.
      const int64_t left = total_steps - warmup_steps - o.num_decay_steps;
      if (left < 0) {
        fail(type, "num_decay_steps",
             "warmup (" + std::to_string(warmup_steps) + ") + num_decay_steps (" +
                 std::to_string(o.num_decay_steps) + ") exceed max_steps (" + std::to_string(total_steps) +
                 "); set num_stable_steps or fewer steps");
      }
      o.num_stable_steps = left;
    }
  }
  return o;
}

double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps,
                 const LrScheduleOptions& o) {
  if (type == SchedulerType::constant || type == SchedulerType::reduce_lr_on_plateau) return 1.0;
  if (step < warmup_steps) return warmup_factor(step, warmup_steps);
  const auto decay_span = static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
  const double progress = static_cast<double>(step - warmup_steps) / decay_span;
  switch (type) {
    case SchedulerType::constant:
    case SchedulerType::constant_with_warmup:
    case SchedulerType::reduce_lr_on_plateau:  // HF: no warmup, the plateau moves the rate
      return 1.0;
    case SchedulerType::linear:
      return std::max(0.0, static_cast<double>(total_steps - step) / decay_span);
    case SchedulerType::cosine:
      return std::max(0.0, cosine_progress_factor(progress, o.num_cycles));
    case SchedulerType::cosine_with_restarts: {
      if (progress >= 1.0) return 0.0;
      double phase = std::fmod(o.num_cycles * progress, 1.0);  // Python's % 1.0
      if (phase < 0) phase += 1.0;
      return std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * phase)));
    }
    case SchedulerType::polynomial: {
      // HF divides by the initial rate because LambdaLR multiplies by it again.
      if (step > total_steps) return o.lr_end / o.lr_init;
      const double lr_range = o.lr_init - o.lr_end;
      const int64_t decay_steps = total_steps - warmup_steps;
      // HF divides by zero when decay_steps is 0 (step == warmup == total): lr_end then.
      const double pct_remaining =
          decay_steps > 0 ? 1 - static_cast<double>(step - warmup_steps) / static_cast<double>(decay_steps)
                          : 0.0;
      const double decay = lr_range * std::pow(pct_remaining, o.power) + o.lr_end;
      return decay / o.lr_init;
    }
    case SchedulerType::inverse_sqrt: {
      const int64_t timescale = warmup_steps != 0 ? warmup_steps : 10000;
      const int64_t shift = timescale - warmup_steps;
      return 1.0 / std::sqrt(static_cast<double>(step + shift) / static_cast<double>(timescale));
    }
    case SchedulerType::cosine_with_min_lr: {
      double factor = cosine_progress_factor(progress, o.num_cycles);
      factor = factor * (1 - o.min_lr_rate) + o.min_lr_rate;
      return std::max(0.0, factor);
    }
    case SchedulerType::warmup_stable_decay: {
      if (step < warmup_steps + o.num_stable_steps) return 1.0;
      if (step < warmup_steps + o.num_stable_steps + o.num_decay_steps) {
        const double p = static_cast<double>(step - warmup_steps - o.num_stable_steps) /
                         static_cast<double>(std::max<int64_t>(1, o.num_decay_steps));
        double value = 0;
        if (o.decay_type == "linear") {
          value = 1.0 - p;
        } else if (o.decay_type == "1-sqrt") {
          value = 1.0 - std::sqrt(p);
        } else {
          value = std::max(0.0, cosine_progress_factor(p, o.num_cycles));
        }
        return (1.0 - o.min_lr_ratio) * value + o.min_lr_ratio;
      }
      return o.min_lr_ratio;
    }
  }
  return 1.0;
}

double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps) {
  return lr_factor(type, step, warmup_steps, total_steps, default_options(type));
}

int64_t warmup_steps_for(const ScheduleOptions& options, int64_t max_steps) {
  // The tiny slack keeps products such as 100 * 0.07 (= 7.000000000000001)
  // from rounding up to the next step.
  const auto ratio_of_steps = [&](double ratio) {
    return std::ceil(static_cast<double>(max_steps) * ratio - 1e-9);
  };
  if (options.warmup_steps_ >= 1) return static_cast<int64_t>(options.warmup_steps_);
  if (options.warmup_steps_ > 0)
    return std::max<int64_t>(1, static_cast<int64_t>(ratio_of_steps(options.warmup_steps_)));
  if (options.warmup_ratio_ > 0)
    return std::max<int64_t>(0, static_cast<int64_t>(ratio_of_steps(options.warmup_ratio_)));
  return 0;
}

LrScheduler::LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps)
    : LrScheduler(type, base_lr, warmup_steps, total_steps, nlohmann::json::object()) {}

LrScheduler::LrScheduler(const ScheduleOptions& options, int64_t total_steps)
    : LrScheduler(options.type_, options.learning_rate_, warmup_steps_for(options, total_steps), total_steps,
                  options.kwargs_) {}

LrScheduler::LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps,
                         const nlohmann::json& kwargs)
    : type_(type),
      base_lr_(base_lr),
      warmup_(warmup_steps),
      total_(total_steps),
      options_(lr_schedule_options(type, kwargs, base_lr, warmup_steps, total_steps)) {
  if (type == SchedulerType::reduce_lr_on_plateau) {
    plateau_.emplace(options_.plateau);
    plateau_lr_ = base_lr;
  }
}

double LrScheduler::lr() const noexcept {
  if (plateau_) return plateau_lr_;
  return base_lr_ * lr_factor(type_, step_, warmup_, total_, options_);
}

void LrScheduler::step_metric(double value) {
  if (!plateau_) return;
  if (const auto reduced = plateau_->step(value, plateau_lr_)) plateau_lr_ = *reduced;
}

void LrScheduler::step_metrics(const std::map<std::string, double>& metrics,
                               const std::optional<std::string>& metric_for_best_model) {
  if (!plateau_) return;
  // HF: metric_for_best_model defaults to "loss" for this schedule; "eval_" is prefixed when missing.
  std::string name = metric_for_best_model.value_or("loss");
  if (name.rfind("eval_", 0) != 0) name = "eval_" + name;
  const auto it = metrics.find(name);
  if (it == metrics.end()) {
    std::string have;
    for (const auto& [k, v] : metrics) have += (have.empty() ? "" : ", ") + k;
    throw std::runtime_error("lr_scheduler_type reduce_lr_on_plateau: metric_for_best_model is '" + name +
                             "', which the evaluation metrics do not hold (they are: " + have +
                             "); set --metric_for_best_model to one of them");
  }
  step_metric(it->second);
}

namespace {

// JSON has no infinity; torch's best may be one (an infinite metric).
nlohmann::json finite_or_text(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

double number_or_text(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  if (j == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw std::runtime_error("scheduler state: expected a number, got " + j.dump());
}

}  // namespace

nlohmann::json LrScheduler::state() const {
  nlohmann::json j = {
      {"last_step", step_}, {"base_lr", base_lr_}, {"warmup_steps", warmup_}, {"total_steps", total_}};
  if (plateau_) {
    // torch's ReduceLROnPlateau state_dict keeps these too (best, num_bad_epochs, cooldown_counter).
    const PlateauState& p = plateau_->state();
    j["plateau"] = {{"lr", plateau_lr_},
                    {"has_best", p.has_best},
                    {"best", finite_or_text(p.best)},
                    {"num_bad_epochs", p.num_bad},
                    {"cooldown_counter", p.cooldown_counter},
                    {"reductions", p.reductions}};
  }
  return j;
}

void LrScheduler::load_state(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("last_step") || !state["last_step"].is_number_integer()) {
    throw std::runtime_error("scheduler state: expected an object with an integer \"last_step\", got " +
                             state.dump());
  }
  step_ = state["last_step"].get<int64_t>();
  if (!plateau_) return;
  const auto it = state.find("plateau");
  if (it == state.end() || !it->is_object())
    throw std::runtime_error(
        "scheduler state: lr_scheduler_type reduce_lr_on_plateau needs a \"plateau\" object (the checkpoint "
        "was "
        "saved with another schedule)");
  const nlohmann::json& j = *it;
  try {
    PlateauState p;
    p.has_best = j.at("has_best").get<bool>();
    p.best = number_or_text(j.at("best"));
    p.num_bad = j.at("num_bad_epochs").get<int64_t>();
    p.cooldown_counter = j.at("cooldown_counter").get<int64_t>();
    p.reductions = j.at("reductions").get<int64_t>();
    const double lr = number_or_text(j.at("lr"));
    plateau_->restore(p);
    plateau_lr_ = lr;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error("scheduler state: bad \"plateau\" object " + j.dump() + " (" + e.what() + ")");
  }
}

}  // namespace trainhook
