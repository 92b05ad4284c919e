// prometheus_options: defaults, accepted values and the errors naming the key.
#include <trainhook/prometheus/prometheus_options.hpp>

#include <trainhook/plugin.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace trainhook::prometheus;

namespace {

std::string error_of(const std::string& json) {
  try {
    PrometheusOptions::from_json(json);
  } catch (const trainhook::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("defaults") {
  const PrometheusOptions o = PrometheusOptions::from_json("{}");
  CHECK(o.listen() == "127.0.0.1:9464");
  CHECK(o.job() == "trainhook");
  CHECK(o.pushgateway_url().empty());
  CHECK(o.push_interval() == 15.0);
  CHECK(o.linger() == 0.0);
}

TEST_CASE("values from --plugin_config flags arrive as strings and are accepted") {
  const PrometheusOptions o = PrometheusOptions::from_json(
      R"({"listen":"0.0.0.0:9100","job":"pretrain","pushgateway_url":"http://pgw:9091/",)"
      R"("push_interval":"2.5","linger":"30"})");
  CHECK(o.listen() == "0.0.0.0:9100");
  CHECK(o.job() == "pretrain");
  CHECK(o.pushgateway_url() == "http://pgw:9091");
  CHECK(o.push_interval() == 2.5);
  CHECK(o.linger() == 30.0);
  CHECK(PrometheusOptions::from_json(R"({"listen":"[::1]:9464"})").listen() == "[::1]:9464");
  CHECK(PrometheusOptions::from_json(R"({"listen":"127.0.0.1:65535"})").listen() == "127.0.0.1:65535");
  CHECK(PrometheusOptions::from_json(R"({"listen":"h:1"})").listen() == "h:1");
  CHECK(PrometheusOptions::from_json(R"({"listen":"127.0.0.1:0"})").listen() == "127.0.0.1:0");
}

TEST_CASE("a bad listen address names the key and the expected form") {
  for (const char* bad : {R"({"listen":"9464"})", R"({"listen":"host:"})", R"({"listen":":9464"})",
                          R"({"listen":"host:65536"})", R"({"listen":"host:123456"})",
                          R"({"listen":"host:12x"})", R"({"listen":""})", R"({"listen":9464})"}) {
    const std::string e = error_of(bad);
    CHECK_MESSAGE(has(e, "plugin_config prometheus.listen"), bad, " -> ", e);
    CHECK_MESSAGE(has(e, "host:port"), bad, " -> ", e);
  }
}

TEST_CASE("other bad values name their key") {
  CHECK(has(error_of(R"({"job":""})"), "plugin_config prometheus.job"));
  CHECK(has(error_of(R"({"pushgateway_url":"pgw:9091"})"), "plugin_config prometheus.pushgateway_url"));
  CHECK(has(error_of(R"({"pushgateway_url":"pgw:9091"})"), "http://"));
  CHECK(has(error_of(R"({"push_interval":0})"), "plugin_config prometheus.push_interval"));
  CHECK(has(error_of(R"({"push_interval":"often"})"), "plugin_config prometheus.push_interval"));
  CHECK(has(error_of(R"({"linger":-1})"), "plugin_config prometheus.linger"));
  const std::string unknown = error_of(R"({"port":9464})");
  CHECK(has(unknown, "plugin_config prometheus: unknown key 'port'"));
  CHECK(has(unknown, "listen, job, pushgateway_url, push_interval, linger"));
  CHECK(has(error_of("[1]"), "JSON object"));
}
