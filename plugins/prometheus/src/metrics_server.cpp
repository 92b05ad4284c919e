#include <trainhook/prometheus/metrics_server.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace trainhook::prometheus {
namespace {

using Clock = std::chrono::steady_clock;

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// Waits until `fd` is ready for `events`, the deadline passes or the server
// stops. True when ready.
bool wait_ready(int fd, short events, int stop_fd, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (fds[1].revents & POLLIN) != 0) return false;
    return (fds[0].revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

void send_all(int fd, const std::string& data, int stop_fd, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_ready(fd, POLLOUT, stop_fd, deadline)) return;
    } else {
      return;
    }
  }
}

std::string response(const std::string& status, const std::string& type, const std::string& body) {
  return "HTTP/1.1 " + status + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

}  // namespace

MetricsServer::MetricsServer(const std::string& listen, RenderMetrics render, MetricsServerOptions options)
    : render_(std::move(render)), options_(options) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("expected host:port");
  std::string host = listen.substr(0, colon);
  const std::string service = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    throw std::runtime_error(std::string("cannot resolve the host: ") + ::gai_strerror(rc));
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr && listen_fd_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      error = system_error("socket");
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = system_error("bind");
    } else if (::listen(fd, 128) != 0) {
      error = system_error("listen");
    } else {
      listen_fd_ = fd;
      sockaddr_storage bound{};
      socklen_t len = sizeof bound;
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
      port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                                : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      break;
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw std::runtime_error(error);
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd_ < 0) {
    const std::string e = system_error("eventfd");
    ::close(listen_fd_);
    throw std::runtime_error(e);
  }
  try {
    for (int i = 0; i < std::max(1, options_.threads); ++i) threads_.emplace_back([this] { serve_loop(); });
  } catch (...) {
    stop();
    throw;
  }
}

MetricsServer::~MetricsServer() { stop(); }

void MetricsServer::stop() {
  if (stop_fd_ >= 0) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(stop_fd_, &one, sizeof one);
  }
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
  listen_fd_ = stop_fd_ = -1;
}

void MetricsServer::serve_loop() {
  for (;;) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if ((fds[1].revents & POLLIN) != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    // Every idle serving thread wakes; one accepts, the others get EAGAIN.
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      // Out of descriptors: the connection stays in the backlog and poll says
      // readable at once; wait a little (or for the stop) instead of spinning.
      if (errno == EMFILE || errno == ENFILE) {
        pollfd stop = {stop_fd_, POLLIN, 0};
        ::poll(&stop, 1, 100);
      }
      continue;  // EAGAIN (another thread took it), or a connection reset before accept
    }
    serve(fd);
    ::close(fd);
  }
}

void MetricsServer::serve(int fd) {
  const Clock::time_point deadline = Clock::now() + options_.io_timeout;
  std::string request;
  char buf[2048];
  while (request.find("\r\n\r\n") == std::string::npos) {
    if (request.size() > 16384)
      return send_all(fd, response("431 Request Header Fields Too Large", "text/plain", ""), stop_fd_,
                      deadline);
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      request.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_ready(fd, POLLIN, stop_fd_, deadline)) return;
    } else {
      return;  // closed or failed before a whole request
    }
  }
  const size_t line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? std::string::npos : line.find(' ', sp1 + 1);
  const std::string method = line.substr(0, sp1);
  const std::string target = sp2 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string path = target.substr(0, target.find('?'));
  if (method != "GET") {
    send_all(fd, response("405 Method Not Allowed", "text/plain", "only GET /metrics\n"), stop_fd_, deadline);
  } else if (path != "/metrics") {
    send_all(fd, response("404 Not Found", "text/plain", "the metrics are at /metrics\n"), stop_fd_,
             deadline);
  } else {
    std::string body;
    try {
      body = render_();
    } catch (const std::exception& e) {
      return send_all(fd, response("500 Internal Server Error", "text/plain", e.what()), stop_fd_, deadline);
    }
    ++served_;  // before the send: a client that got the answer sees it counted
    send_all(fd, response("200 OK", "text/plain; version=0.0.4; charset=utf-8", body), stop_fd_, deadline);
  }
}

}  // namespace trainhook::prometheus
