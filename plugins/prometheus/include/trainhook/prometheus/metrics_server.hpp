// The /metrics endpoint: a small HTTP/1.1 server on threads of its own.
//
// Why not prometheus-cpp's Exposer: Debian's civetweb (which the Exposer runs
// on) creates its threads with a fixed 100 KiB stack (USE_STACK_SIZE), and in
// the trainer's process the static TLS of the libraries LibTorch brings
// (OpenBLAS 60 KiB, glog 30 KiB, libtorch_cpu 10 KiB) does not fit in it:
// pthread_create fails and the Exposer throws "null context when constructing
// CivetServer". These threads get the default stack. The registry, the text
// format and the label escaping stay prometheus-cpp's (the body comes from
// `render`).
//
// Threads: `threads` serving threads each wait in poll on the listening
// socket and a stop eventfd, accept a connection and serve it, one at a time,
// with non-blocking I/O and a deadline per connection (io_timeout: a client
// that sends half a request or never reads holds a thread that long at most;
// meanwhile the other threads accept, and beyond them connections wait in the
// kernel's backlog). One thread wake-up per scrape, no hand-over. Every
// answer closes the connection. The destructor stops and joins all threads
// within one poll.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace trainhook::prometheus {

// What GET /metrics answers (called on a server thread; must be thread-safe).
using RenderMetrics = std::function<std::string()>;

struct MetricsServerOptions {
  int threads = 2;
  std::chrono::milliseconds io_timeout{2000};
};

class MetricsServer {
 public:
  // Listens on `listen` ("host:port" or "[v6]:port"); throws
  // std::runtime_error with the system's reason when it cannot.
  MetricsServer(const std::string& listen, RenderMetrics render, MetricsServerOptions options = {});
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const noexcept { return port_; }
  // GET /metrics requests answered (rendered) so far.
  uint64_t served() const noexcept { return served_.load(); }

 private:
  void stop();  // idempotent
  void serve_loop();
  void serve(int fd);

  RenderMetrics render_;
  MetricsServerOptions options_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd: readable once stopping
  int port_ = 0;
  std::atomic<uint64_t> served_{0};
  std::vector<std::thread> threads_;
};

}  // namespace trainhook::prometheus
