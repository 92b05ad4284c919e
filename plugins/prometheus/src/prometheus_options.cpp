#include <trainhook/prometheus/prometheus_options.hpp>

namespace trainhook::prometheus {
namespace {

// "host:port" or "[v6]:port" with a port in 0..65535 (0: the system picks a
// free one); the host is resolved when the server starts (metrics_server.cpp).
bool is_listen_address(const std::string& v) {
  const size_t colon = v.rfind(':');
  bool ok = colon != std::string::npos && colon > 0 && colon + 1 < v.size() && v.size() - colon - 1 <= 5;
  long port = 0;
  for (size_t i = colon + 1; ok && i < v.size(); ++i) {
    ok = v[i] >= '0' && v[i] <= '9';
    port = port * 10 + (v[i] - '0');
  }
  return ok && port <= 65535;
}

bool is_http_url(const std::string& v) { return v.rfind("http://", 0) == 0 || v.rfind("https://", 0) == 0; }

}  // namespace

const OptionTable<PrometheusOptions>& PrometheusOptions::table() {
  static const auto t =
      OptionTable<PrometheusOptions>("prometheus")
          .key(
              TRAINHOOK_KEY(listen),
              "`host:port` the exporter listens on (`0.0.0.0:9464` for every interface; port 0: a free port, "
              "named in the log). A port in use fails train begin with an error naming the address and this "
              "key")
          .check("host:port with a port from 1 to 65535 (e.g. 127.0.0.1:9464 or 0.0.0.0:9464)",
                 is_listen_address)
          .key(TRAINHOOK_KEY(job), "the `job` label value, also the Pushgateway group's job")
          .check("a non-empty job name", [](const std::string& v) { return !v.empty(); })
          .key(TRAINHOOK_KEY(pushgateway_url),
               "`http(s)://host:port` of a Pushgateway; `user:password@` in it is used for basic auth and "
               "never printed")
          .check("an http:// or https:// URL (e.g. http://127.0.0.1:9091)", is_http_url)
          .shown_default("(none: no pushes)")
          .key(TRAINHOOK_KEY(push_interval),
               "seconds between pushes (0.1 to 86400), checked at each step end")
          .min(0.1)
          .max(86400)
          .key(TRAINHOOK_KEY(linger),
               "seconds (0 to 3600) the exporter stays up after train end or `on_exception`, ending as soon "
               "as "
               "one scrape has read the final values; 0: it stops with the run")
          .min(0)
          .max(3600);
  return t;
}

PrometheusOptions PrometheusOptions::from_json(const std::string& config_json) {
  PrometheusOptions o = table().parse(config_json);
  while (!o.pushgateway_url().empty() && o.pushgateway_url().back() == '/') o.pushgateway_url().pop_back();
  return o;
}

}  // namespace trainhook::prometheus
