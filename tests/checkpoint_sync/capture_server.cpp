#include "capture_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstring>
#include <stdexcept>

CaptureServer::CaptureServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 8) != 0)
    throw std::runtime_error("capture server: cannot listen on 127.0.0.1");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

CaptureServer::~CaptureServer() {
  stop_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  thread_.join();
}

std::vector<CapturedRequest> CaptureServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void CaptureServer::serve() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    handle(fd);
    ::close(fd);
  }
}

void CaptureServer::handle(int fd) {
  std::string buf;
  char chunk[65536];
  auto fill = [&]() {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  };
  while (!stop_) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!fill()) return;
    CapturedRequest r;
    const std::string head = buf.substr(0, end);
    size_t line_end = head.find("\r\n");
    const std::string start = head.substr(0, line_end);
    const auto sp1 = start.find(' '), sp2 = start.rfind(' ');
    r.method = start.substr(0, sp1);
    r.target = start.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      const std::string line = head.substr(pos, e - pos);
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        r.headers[name] = value;
      }
      pos = e + 2;
    }
    buf.erase(0, end + 4);
    const size_t length = r.headers.count("content-length") ? std::stoull(r.headers["content-length"]) : 0;
    while (buf.size() < length)
      if (!fill()) return;
    r.body = buf.substr(0, length);
    buf.erase(0, length);
    const CannedResponse resp = handler_(r);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(r);
    }
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) +
                      " X\r\nContent-Length: " + std::to_string(resp.body.size()) + "\r\n";
    for (const auto& [n, v] : resp.headers) out += n + ": " + v + "\r\n";
    out += "\r\n" + resp.body;
    if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) return;
  }
}
