#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

namespace trainhook::reduce_lr_on_plateau {

ReduceLrOnPlateauOptions ReduceLrOnPlateauOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("reduce_lr_on_plateau", config_json,
                                  {"factor", "patience", "threshold", "threshold_mode", "cooldown", "min_lr",
                                   "metric", "greater_is_better"});
  ReduceLrOnPlateauOptions o;
  PlateauOptions p;
  // The setters check ranges; their message gets the key's full name here.
  auto set = [&](const std::string& key, auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      throw ConfigError(cfg.where(key) + m.substr(m.find(':')));
    }
  };
  if (auto v = cfg.number("factor")) set("factor", [&] { p.factor(*v); });
  if (auto v = cfg.integer("patience", 1)) set("patience", [&] { p.patience(*v); });
  if (auto v = cfg.number("threshold")) set("threshold", [&] { p.threshold(*v); });
  if (auto v = cfg.choice("threshold_mode", {"rel", "abs"})) p.relative_threshold(*v == "rel");
  if (auto v = cfg.integer("cooldown", 0)) set("cooldown", [&] { p.cooldown(*v); });
  if (auto v = cfg.number("min_lr")) set("min_lr", [&] { p.min_lr(*v); });
  if (auto v = cfg.boolean("greater_is_better")) o.greater_is_better(*v);
  nlohmann::json raw = nlohmann::json::parse(config_json.empty() ? "{}" : config_json);
  if (raw.contains("metric")) {
    if (!raw["metric"].is_string() || raw["metric"].get<std::string>().empty())
      throw ConfigError(cfg.where("metric") + ": expected a metric name, got " + raw["metric"].dump());
    o.metric(raw["metric"].get<std::string>());
  }
  o.plateau(p);
  return o;
}

}  // namespace trainhook::reduce_lr_on_plateau
