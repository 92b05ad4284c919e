// A minimal HTTP/1.1 server on 127.0.0.1 for the tests: records every request
// (method, target, headers, body) and answers with what the test's handler
// returns. One connection at a time; keep-alive supported.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct CapturedRequest {
  std::string method;
  std::string target;                          // path?query as sent
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string path() const { return target.substr(0, target.find('?')); }
  std::string query() const {
    const auto q = target.find('?');
    return q == std::string::npos ? "" : target.substr(q + 1);
  }
};

struct CannedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

class CaptureServer {
 public:
  using Handler = std::function<CannedResponse(const CapturedRequest&)>;
  explicit CaptureServer(Handler handler);
  ~CaptureServer();
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<CapturedRequest> requests() const;

 private:
  void serve();
  void handle(int fd);
  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::vector<CapturedRequest> requests_;
  std::thread thread_;
};
