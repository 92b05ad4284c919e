#include <trainhook/distributed/agent_store_client.hpp>

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>

namespace trainhook::distributed {
namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return 0;
  return left > 1'000'000'000 ? 1'000'000'000 : static_cast<int>(left);
}

// Waits for `events` on fd until the deadline; false when it passed.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, remaining_ms(deadline));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

// A non-blocking TCP connection to host:port, or -1 with `error` set.
int connect_to(const std::string& host, uint16_t port, Clock::time_point deadline, std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0) {
    error = std::string("the host does not resolve: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (!wait_for(fd, POLLOUT, deadline)) {
        error = "no connection within the timeout";
      } else {
        int so_error = 0;
        socklen_t len = sizeof(so_error);
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
        if (so_error == 0)
          rc = 0;
        else
          error = std::strerror(so_error);
      }
    } else if (rc != 0) {
      error = std::strerror(errno);
    }
    if (rc != 0) {
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(res);
  if (fd >= 0) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
                 sizeof(one));  // requests are small and answered one by one
  }
  return fd;
}

}  // namespace

bool accepts_connections(const std::string& host, uint16_t port, Clock::time_point deadline,
                         std::string& error) {
  const int fd = connect_to(host, port, deadline, error);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

AgentStoreClient::AgentStoreClient(std::string host, uint16_t port, std::chrono::milliseconds timeout,
                                   std::string what)
    : where_(agent_store::format_store_address(host, port) + " (" + what + ")"), timeout_(timeout) {
  deadline_ = Clock::now() + timeout_;
  std::string error;
  fd_ = connect_to(host, port, deadline_, error);
  if (fd_ < 0) throw std::runtime_error("cannot connect to " + where_ + ": " + error);
  // A 1.13 store reads our VALIDATE byte as SET and the next 8 bytes (the
  // magic, PING, the nonce's low 3 bytes) as the key's length: with bits
  // 16-23 of the nonce set that length is above any vector's max_size, so it
  // drops the connection at once (and keeps serving the others), never
  // allocating what it was told.
  nonce_ = std::random_device{}() | 0x00ff0000u;
  greeting_ = true;
  try {
    send_all(agent_store::encode_hello(nonce_), "VALIDATE and PING");
    receive([this](std::string_view b) { return agent_store::read_ping_reply(b, nonce_); },
            "the 4-byte echo of its ping, as a PyTorch 2.x TCPStore sends");
  } catch (...) {
    ::close(fd_);
    throw;
  }
  greeting_ = false;
}

AgentStoreClient::~AgentStoreClient() {
  if (fd_ >= 0) ::close(fd_);
}

void AgentStoreClient::send_all(const std::string& bytes, const char* request) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_for(fd_, POLLOUT, deadline_))
        throw std::runtime_error(where_ + " took no " + request + " request within " +
                                 std::to_string(timeout_.count() / 1000) + "s");
    } else {
      throw std::runtime_error("sending " + std::string(request) + " to " + where_ +
                               " failed: " + std::strerror(errno));
    }
  }
}

std::string AgentStoreClient::receive(const std::function<agent_store::Reply(std::string_view)>& read,
                                      const char* expected) {
  for (;;) {
    const auto reply = read(buffer_);
    if (reply.status == agent_store::Reply::Status::complete) {
      buffer_.erase(0, reply.consumed);
      return reply.value;
    }
    if (reply.status == agent_store::Reply::Status::invalid)
      fail_answer(where_ + " " + reply.problem + " (expected " + expected + ")");
    if (!wait_for(fd_, POLLIN, deadline_)) {
      throw std::runtime_error(where_ + " sent no answer within " + std::to_string(timeout_.count() / 1000) +
                               "s (expected " + expected + ")");
    }
    char chunk[4096];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      buffer_.append(chunk, static_cast<size_t>(n));
    } else if (n == 0) {
      fail_answer(where_ + " closed the connection after " + std::to_string(buffer_.size()) +
                  " bytes of its answer (expected " + expected + ")");
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      fail_answer("reading from " + where_ + " failed: " + std::strerror(errno) + " (expected " + expected +
                  ")");
    }
  }
}

void AgentStoreClient::fail_answer(const std::string& message) const {
  // A wrong answer or a hang-up to the greeting: a listener that is not a 2.x
  // store (silence is not told apart: it stays a plain timeout).
  if (greeting_) throw NotA2xStore(message);
  throw std::runtime_error(message);
}

void AgentStoreClient::ping() {
  ++nonce_;
  send_all(agent_store::encode_ping(nonce_), "PING");
  receive([this](std::string_view b) { return agent_store::read_ping_reply(b, nonce_); },
          "the 4-byte echo of its ping");
}

void AgentStoreClient::set(std::string_view key, std::string_view value) {
  deadline_ = Clock::now() + timeout_;
  send_all(agent_store::encode_set("/" + std::string(key), value), "SET");
  ping();
}

std::string AgentStoreClient::wait_get(std::string_view key) {
  deadline_ = Clock::now() + timeout_;
  const std::string wire_key = "/" + std::string(key);
  send_all(agent_store::encode_wait(wire_key), "WAIT");
  receive([](std::string_view b) { return agent_store::read_wait_reply(b); },
          ("the STOP_WAITING byte once key '" + std::string(key) + "' is set").c_str());
  send_all(agent_store::encode_get(wire_key), "GET");
  return receive([](std::string_view b) { return agent_store::read_get_reply(b); },
                 ("the value of key '" + std::string(key) + "'").c_str());
}

}  // namespace trainhook::distributed
