#include <trainhook/prometheus/prometheus_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/plugin_config.hpp>

#include <nlohmann/json.hpp>

namespace trainhook::prometheus {
namespace {

std::string text(const nlohmann::json& cfg, const support::PluginConfig& where, const std::string& key,
                 const std::string& expected) {
  auto it = cfg.find(key);
  if (it == cfg.end()) return {};
  if (!it->is_string() || it->get<std::string>().empty())
    throw ConfigError(where.where(key) + ": expected " + expected + ", got " + it->dump());
  return it->get<std::string>();
}

// "host:port" or "[v6]:port" with a port in 0..65535 (0: the system picks a
// free one); the host is resolved when the server starts (metrics_server.cpp).
void check_listen(const std::string& v, const support::PluginConfig& cfg) {
  const size_t colon = v.rfind(':');
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < v.size() && v.size() - colon - 1 <= 5;
  long port = 0;
  for (size_t i = colon + 1; ok && i < v.size(); ++i) {
    ok = v[i] >= '0' && v[i] <= '9';
    port = port * 10 + (v[i] - '0');
  }
  if (!ok || port > 65535)
    throw ConfigError(cfg.where("listen") + ": expected host:port with a port from 1 to 65535 " +
                      "(e.g. 127.0.0.1:9464 or 0.0.0.0:9464), got \"" + v + "\"");
}

}  // namespace

PrometheusOptions PrometheusOptions::from_json(const std::string& config_json) {
  const support::PluginConfig cfg("prometheus", config_json,
                                  {"listen", "job", "pushgateway_url", "push_interval", "linger"});
  const nlohmann::json j = nlohmann::json::parse(config_json.empty() ? "{}" : config_json);
  PrometheusOptions o;
  if (std::string v = text(j, cfg, "listen", "host:port (e.g. 127.0.0.1:9464)"); !v.empty()) {
    check_listen(v, cfg);
    o.listen(v);
  }
  if (std::string v = text(j, cfg, "job", "a non-empty job name"); !v.empty()) o.job(v);
  if (std::string v = text(j, cfg, "pushgateway_url", "an http:// or https:// URL"); !v.empty()) {
    if (v.rfind("http://", 0) != 0 && v.rfind("https://", 0) != 0)
      throw ConfigError(cfg.where("pushgateway_url") + ": expected an http:// or https:// URL " +
                        "(e.g. http://127.0.0.1:9091), got \"" + v + "\"");
    while (!v.empty() && v.back() == '/') v.pop_back();
    o.pushgateway_url(v);
  }
  if (auto s = cfg.number_in("push_interval", 0.1, 86400)) o.push_interval(*s);
  if (auto s = cfg.number_in("linger", 0, 3600)) o.linger(*s);
  return o;
}

}  // namespace trainhook::prometheus
