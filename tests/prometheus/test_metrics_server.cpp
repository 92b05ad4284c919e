// metrics_server: answers GET /metrics with the rendered text, refuses other
// requests, reports a taken port, and keeps answering beside clients that
// send half a request or never read. 127.0.0.1 and free ports only; waits
// are bounded by the server's io_timeout, never asserted.
#include <trainhook/prometheus/metrics_server.hpp>

#include <trainhook/support/http_client.hpp>

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <stdexcept>
#include <string>
#include <vector>

using namespace trainhook::prometheus;

namespace {

trainhook::support::HttpResponse fetch(int port, const std::string& method, const std::string& path) {
  trainhook::support::HttpClient http(
      trainhook::support::HttpClientOptions().timeout(std::chrono::seconds(10)));
  trainhook::support::HttpRequest r =
      trainhook::support::HttpRequest::get("http://127.0.0.1:" + std::to_string(port) + path);
  r.method = method;
  return http.perform(r);
}

// A client socket connected to the server that sends `data` and never reads.
int stalled_client(int port, const std::string& data) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size()));
  return fd;
}

}  // namespace

TEST_CASE("GET /metrics answers the rendered text in the 0.0.4 format") {
  std::atomic<int> renders{0};
  MetricsServer server("127.0.0.1:0", [&] {
    ++renders;
    return std::string("trainhook_up 1\n");
  });
  REQUIRE(server.port() > 0);
  const auto r = fetch(server.port(), "GET", "/metrics");
  REQUIRE_MESSAGE(r.ok(), r.describe());
  CHECK(r.body == "trainhook_up 1\n");
  CHECK(r.header("content-type").value_or("") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(renders == 1);
  CHECK(fetch(server.port(), "GET", "/metrics?x=1").ok());
  CHECK(server.served() == 2);
}

TEST_CASE("other paths and methods are refused without rendering") {
  std::atomic<int> renders{0};
  MetricsServer server("127.0.0.1:0", [&] {
    ++renders;
    return std::string();
  });
  CHECK(fetch(server.port(), "GET", "/").status == 404);
  CHECK(fetch(server.port(), "GET", "/metricsx").status == 404);
  CHECK(fetch(server.port(), "POST", "/metrics").status == 405);
  CHECK(renders == 0);
}

TEST_CASE("a taken port and a bad host are errors with the system's reason") {
  MetricsServer first("127.0.0.1:0", [] { return std::string(); });
  std::string error;
  try {
    MetricsServer second("127.0.0.1:" + std::to_string(first.port()), [] { return std::string(); });
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  CHECK_MESSAGE(error.find("Address already in use") != std::string::npos, error);
  CHECK_THROWS_AS(MetricsServer("no.such.host.invalid:9464", [] { return std::string(); }),
                  std::runtime_error);
}

TEST_CASE("clients that send half a request or never read do not stop later scrapes") {
  MetricsServerOptions options;
  options.threads = 2;
  options.io_timeout = std::chrono::milliseconds(500);
  const std::string big(1 << 20, 'x');  // more than the socket buffers hold: a non-reader blocks the send
  MetricsServer server(
      "127.0.0.1:0", [&] { return big; }, options);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(stalled_client(server.port(), "GET /metrics HTTP/1.1\r\n"));
  for (int i = 0; i < 3; ++i)
    held.push_back(stalled_client(server.port(), "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  const auto r = fetch(server.port(), "GET", "/metrics");
  CHECK_MESSAGE(r.ok(), r.describe());
  CHECK(r.body.size() == big.size());
  for (const int fd : held) ::close(fd);
}

TEST_CASE("the server stops and closes a connection a client holds") {
  MetricsServer* server = new MetricsServer("127.0.0.1:0", [] { return std::string("x\n"); });
  const int fd = stalled_client(server->port(), "GET /metrics HTTP/1.1\r\n");
  delete server;  // returns without waiting for the client (the stop eventfd wakes every poll)
  timeval wait{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char c = 0;
  // Closed (0), or reset when it was still in the listen backlog; a timeout would be EAGAIN.
  const ssize_t n = ::recv(fd, &c, 1, 0);
  CHECK((n == 0 || (n < 0 && errno == ECONNRESET)));
  ::close(fd);
}
