#include <trainhook/early_stopping/early_stopping_callback.hpp>
#include <trainhook/strings.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

namespace trainhook::early_stopping {
namespace {

std::string format_number(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

using strings::ends_with;

}  // namespace

EarlyStoppingCallback::EarlyStoppingCallback(trainhook::Setup& setup)
    : EarlyStoppingCallback(setup.host(), EarlyStoppingOptions::from_json(setup.config_json())) {}

EarlyStoppingCallback::EarlyStoppingCallback(const trainhook::Host& host, const EarlyStoppingOptions& options)
    : host_(host), options_(options) {}

void EarlyStoppingCallback::read_arguments(bool strict) {
  const std::string name = host_.training_arg<std::string>("metric_for_best_model", "");
  if (name.empty()) {
    if (strict)
      throw ConfigError(
          "early_stopping requires metric_for_best_model to be set (e.g. --metric_for_best_model eval_loss)");
    return;
  }
  metric_ = name.rfind("eval_", 0) == 0 ? name : "eval_" + name;
  // HF's TrainingArguments default: a metric whose name ends with "loss" is lower-is-better.
  greater_is_better_ = host_.training_arg<bool>("greater_is_better", !ends_with(name, "loss"));

  if (strict) {
    if (host_.training_arg<std::string>("eval_strategy", "no") == "no")
      throw ConfigError(
          "early_stopping requires an evaluation strategy: set --eval_strategy to steps or epoch (it is "
          "\"no\")");
    if (!host_.training_arg<bool>("load_best_model_at_end", false))
      host_.warn(
          "using early stopping without load_best_model_at_end=true: the model at the end is the last one, "
          "not the best one");
  }
  configured_ = true;
}

void EarlyStoppingCallback::on_train_begin(trainhook::Event&) {
  read_arguments(/*strict=*/true);
  training_ = true;
}

void EarlyStoppingCallback::on_train_end(trainhook::Event&) { training_ = false; }

void EarlyStoppingCallback::check_metric_value(const th_state& state, double value) {
  const bool has_best = state.has_best_metric != 0;
  const double best = state.best_metric;
  // Strict comparison, as numpy's greater/less: NaN never improves.
  const bool better = greater_is_better_ ? value > best : value < best;
  if (!has_best || (better && std::abs(value - best) > options_.threshold()))
    counter_ = 0;
  else
    ++counter_;
}

void EarlyStoppingCallback::on_evaluate(trainhook::Event& e) {
  if (!configured_) read_arguments(/*strict=*/false);
  if (!configured_) {
    if (!warned_missing_)
      host_.warn("early stopping needs metric_for_best_model; it is unset, so early stopping is disabled");
    warned_missing_ = true;
    return;
  }
  const std::optional<double> value = e.values().find(metric_);
  if (!value) {
    host_.warn("early stopping required metric_for_best_model, but did not find " + metric_ +
               " so early stopping is disabled");
    return;
  }
  check_metric_value(e.state(), *value);
  if (counter_ >= options_.patience()) {
    e.control().should_training_stop = 1;  // as HF, also for an evaluation after training
    if (training_)
      host_.info("stopping training at step " + std::to_string(e.state().global_step) + ": " + metric_ +
                 " = " + format_number(*value) + " did not improve on the best (" +
                 (e.state().has_best_metric ? format_number(e.state().best_metric) : std::string("none")) +
                 ") by more than " + format_number(options_.threshold()) + " for " +
                 std::to_string(counter_) + " evaluation(s) (patience " +
                 std::to_string(options_.patience()) + ")");
  }
}

std::string EarlyStoppingCallback::save_state() {
  // HF ExportableState layout.
  nlohmann::json j = {{"args",
                       {{"early_stopping_patience", options_.patience()},
                        {"early_stopping_threshold", options_.threshold()}}},
                      {"attributes", {{"early_stopping_patience_counter", counter_}}}};
  return j.dump();
}

void EarlyStoppingCallback::load_state(const std::string& state_json) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(state_json);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(std::string("early_stopping: saved state is not valid JSON: ") + e.what());
  }
  const nlohmann::json* counter = nullptr;
  if (j.is_object() && j.contains("attributes") && j["attributes"].is_object() &&
      j["attributes"].contains("early_stopping_patience_counter"))
    counter = &j["attributes"]["early_stopping_patience_counter"];
  if (counter == nullptr || !counter->is_number_integer() || counter->get<int64_t>() < 0)
    throw ConfigError(
        "early_stopping: saved state has no attributes.early_stopping_patience_counter (a non-negative "
        "integer): " +
        state_json);
  counter_ = counter->get<int64_t>();

  // The configuration of this run wins over the checkpoint's; say so when they differ.
  if (j.contains("args") && j["args"].is_object()) {
    const auto& a = j["args"];
    const bool patience_differs =
        a.contains("early_stopping_patience") && a["early_stopping_patience"].is_number() &&
        a["early_stopping_patience"].get<double>() != static_cast<double>(options_.patience());
    const bool threshold_differs = a.contains("early_stopping_threshold") &&
                                   a["early_stopping_threshold"].is_number() &&
                                   a["early_stopping_threshold"].get<double>() != options_.threshold();
    if (patience_differs || threshold_differs)
      host_.warn("the checkpoint was saved with early stopping " + a.dump() + "; this run uses patience " +
                 std::to_string(options_.patience()) + ", threshold " + format_number(options_.threshold()));
  }
  host_.debug("restored early stopping counter " + std::to_string(counter_));
}

}  // namespace trainhook::early_stopping
