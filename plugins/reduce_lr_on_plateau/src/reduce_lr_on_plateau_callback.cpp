#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_callback.hpp>

#include <nlohmann/json.hpp>

#include <sstream>

namespace trainhook::reduce_lr_on_plateau {
namespace {

// The metric (eval_ prefixed) and its direction, from the options or HF's
// metric_for_best_model / greater_is_better.
PlateauOptions resolve(const trainhook::Host& host, const ReduceLrOnPlateauOptions& o, std::string& metric) {
  metric = o.metric().value_or("");
  if (metric.empty()) metric = host.training_arg<std::string>("metric_for_best_model", "");
  if (metric.empty()) metric = "loss";
  if (metric.rfind("eval_", 0) != 0) metric = "eval_" + metric;
  bool greater = metric.size() < 4 || metric.compare(metric.size() - 4, 4, "loss") != 0;
  greater = host.training_arg<bool>("greater_is_better", greater);
  if (o.greater_is_better()) greater = *o.greater_is_better();
  PlateauOptions p = o.plateau();
  p.greater_is_better(greater);
  return p;
}

}  // namespace

ReduceLrOnPlateauCallback::ReduceLrOnPlateauCallback(trainhook::Setup& setup)
    : ReduceLrOnPlateauCallback(setup.host(), ReduceLrOnPlateauOptions::from_json(setup.config_json())) {}

ReduceLrOnPlateauCallback::ReduceLrOnPlateauCallback(const trainhook::Host& host,
                                                     const ReduceLrOnPlateauOptions& options)
    : host_(host), plateau_(resolve(host, options, metric_)) {
  if (!host_.has_model_access())
    throw ConfigError("reduce_lr_on_plateau needs a trainer with ABI 1.1 (learning-rate factor)");
}

void ReduceLrOnPlateauCallback::on_evaluate(trainhook::Event& e) {
  const auto value = e.values().find(metric_);
  if (!value) {
    if (!warned_missing_)
      host_.warn("the evaluation has no metric '" + metric_ + "'; the learning rate is kept");
    warned_missing_ = true;
    return;
  }
  const std::vector<double> lrs = host_.learning_rates();
  if (lrs.empty() || !(lrs[0] > 0)) return;
  const auto reduced = plateau_.step(*value, lrs[0]);
  if (!reduced) return;
  // The factor is absolute: keep the ratio of the new rate to the schedule's.
  host_.set_lr_factor(host_.lr_factor() * (*reduced / lrs[0]));
  std::ostringstream msg;
  msg << "step " << e.state().global_step << ": " << metric_ << " did not improve for "
      << plateau_.options().patience() << " evaluation(s); learning rate " << lrs[0] << " -> " << *reduced;
  host_.info(msg.str());
}

std::string ReduceLrOnPlateauCallback::save_state() {
  const PlateauState& s = plateau_.state();
  nlohmann::json attrs = {
      {"num_bad", s.num_bad}, {"cooldown_counter", s.cooldown_counter}, {"reductions", s.reductions}};
  attrs["best"] = s.has_best ? nlohmann::json(s.best) : nlohmann::json(nullptr);
  return nlohmann::json{{"args", nlohmann::json::object()}, {"attributes", attrs}}.dump();
}

void ReduceLrOnPlateauCallback::load_state(const std::string& state_json) {
  const nlohmann::json j = nlohmann::json::parse(state_json);
  const nlohmann::json& a = j.at("attributes");
  PlateauState s;
  s.has_best = !a.at("best").is_null();
  s.best = s.has_best ? a.at("best").get<double>() : 0.0;
  s.num_bad = a.at("num_bad").get<int64_t>();
  s.cooldown_counter = a.at("cooldown_counter").get<int64_t>();
  s.reductions = a.at("reductions").get<int64_t>();
  plateau_.restore(s);
}

}  // namespace trainhook::reduce_lr_on_plateau
