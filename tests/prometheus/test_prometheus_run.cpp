// prometheus_run: the exporter serves the run's metrics, a taken port is a
// ConfigError naming the address and the key, and `linger` ends at the first
// scrape of the final values. 127.0.0.1 and free ports only.
#include <trainhook/prometheus/prometheus_run.hpp>

#include <trainhook/support/http_client.hpp>

#include <free_port.hpp>
#include <plugin_driver.hpp>

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

using namespace trainhook::prometheus;

namespace {

// A listening socket on a free 127.0.0.1 port (closed by the destructor).
struct TakenPort {
  int fd = -1;
  int port = 0;
  TakenPort() {
    fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd, 4) == 0);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~TakenPort() { ::close(fd); }
};

std::string scrape(int port) {
  trainhook::support::HttpClient http(
      trainhook::support::HttpClientOptions().timeout(std::chrono::seconds(10)));
  const auto r = http.perform(
      trainhook::support::HttpRequest::get("http://127.0.0.1:" + std::to_string(port) + "/metrics"));
  REQUIRE_MESSAGE(r.ok(), r.describe());
  return r.body;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a port in use is a config error naming the address and the key") {
  TakenPort taken;
  const std::string listen = "127.0.0.1:" + std::to_string(taken.port);
  std::string error = "no error";
  try {
    PrometheusRun run(PrometheusOptions().listen(listen), "run", trainhook::Host());
  } catch (const trainhook::ConfigError& e) {
    error = e.what();
  }
  CHECK_MESSAGE(has(error, listen), error);
  CHECK_MESSAGE(has(error, "plugin_config prometheus.listen"), error);
}

TEST_CASE("the exporter serves the run's series on /metrics") {
  const int port = trainhook::testkit::free_port();
  PrometheusRun run(PrometheusOptions().listen("127.0.0.1:" + std::to_string(port)), "run",
                    trainhook::Host());
  CHECK(run.port() == port);
  run.metrics().set_logged("loss", 0.75);
  const std::string text = scrape(port);
  CHECK(has(text, R"(trainhook_loss{job="trainhook",run_name="run"} 0.75)"));
  CHECK(has(text, R"(trainhook_up{job="trainhook",run_name="run"} 1)"));
}

TEST_CASE("linger ends as soon as a scrape has read the final values") {
  const int port = trainhook::testkit::free_port();
  testkit::FakeHost host;
  PrometheusRun run(PrometheusOptions().listen("127.0.0.1:" + std::to_string(port)).linger(600), "run",
                    trainhook::Host(host.table()));
  scrape(port);         // before the end: does not count
  run.linger_at_end();  // as on_train_end does
  CHECK_FALSE(run.end_mark(trainhook::support::RunOutcome::finished).has_value());  // no Pushgateway
  std::string seen;
  std::thread scraper([&] { seen = scrape(port); });
  run.report({});  // returns once the scraper's request read the final values (not after 600 s)
  scraper.join();
  CHECK_FALSE(host.logged("no scrape read the final values"));
  CHECK(host.logged("served /metrics on port " + std::to_string(port)));
  CHECK(has(seen, R"(trainhook_up{job="trainhook",run_name="run"} 0)"));
  CHECK(has(seen, "trainhook_last_success_timestamp_seconds{"));
}
