// A scripted HTTP/1.1 server on 127.0.0.1 (free port) for tests of HTTP
// clients: each request is answered by a handler the test supplies, and every
// request is recorded. One connection at a time, one request per connection
// ("Connection: close"), Content-Length bodies only. The server thread stops
// in the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace trainhook::testing {

struct TestRequest {
  std::string method;
  std::string target;                          // path and query as sent
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct TestReply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool drop = false;                   // close the connection without answering
  std::chrono::milliseconds delay{0};  // wait before answering
};

class TestHttpServer {
 public:
  using Handler = std::function<TestReply(const TestRequest&)>;
  explicit TestHttpServer(Handler handler);
  ~TestHttpServer();
  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  int port() const noexcept { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<TestRequest> requests() const;

 private:
  void serve();
  void handle(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<TestRequest> requests_;
  std::thread thread_;
};

}  // namespace trainhook::testing
