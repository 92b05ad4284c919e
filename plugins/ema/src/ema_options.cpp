#include <trainhook/ema/ema_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

#include <cmath>

namespace trainhook::ema {

EmaOptions& EmaOptions::decay(double d) {
  if (!std::isfinite(d) || d < 0 || d >= 1)
    throw ConfigError("plugin_config ema.decay: expected a number in [0, 1), got " + std::to_string(d));
  decay_ = d;
  return *this;
}

EmaOptions& EmaOptions::update_every(int64_t n) {
  if (n < 1)
    throw ConfigError("plugin_config ema.update_every: expected an integer >= 1, got " + std::to_string(n));
  update_every_ = n;
  return *this;
}

EmaOptions EmaOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg(
      "ema", config_json,
      {"decay", "warmup", "evaluate_with_ema", "update_every", "log_checksum", "final_weights"});
  EmaOptions o;
  if (auto d = cfg.number("decay")) o.decay(*d);
  if (auto w = cfg.boolean("warmup")) o.warmup(*w);
  if (auto e = cfg.boolean("evaluate_with_ema")) o.evaluate_with_ema(*e);
  if (auto n = cfg.integer("update_every", 1)) o.update_every(*n);
  if (auto l = cfg.boolean("log_checksum")) o.log_checksum(*l);
  if (auto f = cfg.boolean("final_weights")) o.final_weights(*f);
  return o;
}

}  // namespace trainhook::ema
