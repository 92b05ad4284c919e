#include <trainhook/system_stats/system_stats_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

namespace trainhook::system_stats {

SystemStatsOptions SystemStatsOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("system_stats", config_json, {"interval_steps", "gpu"});
  SystemStatsOptions o;
  if (auto n = cfg.integer("interval_steps", 1)) o.interval_steps(*n);
  if (auto g = cfg.boolean("gpu")) o.gpu(*g);
  return o;
}

}  // namespace trainhook::system_stats
