// The prometheus callback's configuration (its plugin_config section; keys in table()), e.g.
//   --plugin_config prometheus.listen=127.0.0.1:9464 --plugin_config prometheus.job=llm-pretrain
//   --plugin_config prometheus.pushgateway_url=http://pgw:9091 --plugin_config prometheus.push_interval=30
#pragma once

#include <trainhook/options.hpp>

#include <string>

namespace trainhook::prometheus {

class PrometheusOptions {
 public:
  // The keys, declared once.
  static const OptionTable<PrometheusOptions>& table();
  // Parses the JSON object given to the callback; throws trainhook::ConfigError
  // naming the key and what was expected for unknown keys or bad values.
  static PrometheusOptions from_json(const std::string& config_json);

  // host:port (or [v6]:port) the exporter serves /metrics on; port 0: any free port.
  TRAINHOOK_OPTION(std::string, listen, "127.0.0.1:9464");
  // The `job` label of every series (and the Pushgateway grouping key).
  TRAINHOOK_OPTION(std::string, job, "trainhook");
  // http(s)://host:port of a Pushgateway; empty: no pushes.
  TRAINHOOK_OPTION(std::string, pushgateway_url, "");
  // Seconds between two periodic pushes (checked at step end).
  TRAINHOOK_OPTION(double, push_interval, 15.0);
  // Seconds the exporter stays up after train end, until one scrape has read
  // the final values; 0: it stops with the run.
  TRAINHOOK_OPTION(double, linger, 0.0);
};

}  // namespace trainhook::prometheus
