#include <trainhook/grad_stats/grad_stats_options.hpp>

namespace trainhook::grad_stats {

const OptionTable<GradStatsOptions>& GradStatsOptions::table() {
  static const auto t =
      OptionTable<GradStatsOptions>("grad_stats")
          .choice(
              "per", [](GradStatsOptions& o) -> bool& { return o.per_module(); },
              {{"module", true}, {"parameter", false}},
              "`module`: per top-level module (first part of the dotted name); `parameter`: per parameter")
          .key(TRAINHOOK_KEY(gradients), "log `grad_norm/<name>`")
          .key(TRAINHOOK_KEY(weights), "log `weight_norm/<name>`");
  return t;
}

GradStatsOptions GradStatsOptions::from_json(const std::string& config_json) {
  GradStatsOptions o = table().parse(config_json);
  if (!o.gradients() && !o.weights())
    throw ConfigError("plugin_config grad_stats: gradients and weights are both false: nothing to log");
  return o;
}

}  // namespace trainhook::grad_stats
