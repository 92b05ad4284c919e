#include <trainhook/grad_stats/grad_stats_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

namespace trainhook::grad_stats {

GradStatsOptions GradStatsOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("grad_stats", config_json, {"per", "gradients", "weights"});
  GradStatsOptions o;
  if (auto p = cfg.choice("per", {"module", "parameter"})) o.per_module(*p == "module");
  if (auto g = cfg.boolean("gradients")) o.gradients(*g);
  if (auto w = cfg.boolean("weights")) o.weights(*w);
  if (!o.gradients() && !o.weights())
    throw ConfigError("plugin_config grad_stats: gradients and weights are both false: nothing to log");
  return o;
}

}  // namespace trainhook::grad_stats
