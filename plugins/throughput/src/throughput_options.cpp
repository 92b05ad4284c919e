#include <trainhook/throughput/throughput_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

namespace trainhook::throughput {

ThroughputOptions ThroughputOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("throughput", config_json,
                                  {"window_size", "peak_flops", "flops_per_sample"});
  ThroughputOptions o;
  if (auto w = cfg.integer("window_size", 1)) o.window_size(*w);
  if (auto p = cfg.number_in("peak_flops", 1.0, 1e30)) o.peak_flops(*p);
  if (auto f = cfg.number_in("flops_per_sample", 1e-30, 1e30)) o.flops_per_sample(*f);
  return o;
}

}  // namespace trainhook::throughput
