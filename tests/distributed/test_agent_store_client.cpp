// The agent store client against a fake torchrun store on 127.0.0.1 (a free
// port, stopped by the test) that speaks the protocol's subset the client uses
// and can misbehave: a wrong ping echo, a closed connection, silence, a value
// too long. Every error names the address and what was expected.
#include <trainhook/distributed/agent_store_client.hpp>

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using trainhook::distributed::AgentStoreClient;
using namespace std::chrono_literals;

namespace {

enum class Behaviour { store, wrong_echo, close_after_hello, silent, huge_value };

class FakeStore {
 public:
  explicit FakeStore(Behaviour b = Behaviour::store) : behaviour_(b) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    REQUIRE(::listen(listen_fd_, 8) == 0);
    socklen_t len = sizeof(a);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeStore() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      for (const int fd : clients_) ::shutdown(fd, SHUT_RDWR);
    }
    changed_.notify_all();
    ::shutdown(listen_fd_, SHUT_RDWR);
    acceptor_.join();
    for (auto& t : threads_) t.join();
    for (const int fd : clients_) ::close(fd);
    ::close(listen_fd_);
  }
  uint16_t port() const { return port_; }

 private:
  void accept_loop() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) {
        ::close(fd);
        return;
      }
      clients_.push_back(fd);
      threads_.emplace_back([this, fd] { serve(fd); });
    }
  }
  // Reads exactly n bytes; false at the end of the connection.
  static bool read_n(int fd, void* out, size_t n) {
    auto* p = static_cast<char*>(out);
    while (n > 0) {
      const ssize_t r = ::recv(fd, p, n, 0);
      if (r <= 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  }
  static bool read_string(int fd, std::string& s) {
    uint64_t n = 0;
    if (!read_n(fd, &n, 8) || n > 4096) return false;
    s.resize(n);
    return read_n(fd, s.data(), n);
  }
  static void write_all(int fd, const std::string& s) { (void)::send(fd, s.data(), s.size(), MSG_NOSIGNAL); }
  void serve(int fd) {
    uint8_t q = 0;
    while (read_n(fd, &q, 1)) {
      if (q == 0) {  // VALIDATE
        uint32_t magic = 0;
        if (!read_n(fd, &magic, 4) || magic != 0x3C85F7CE) return;
        if (behaviour_ == Behaviour::close_after_hello) return ::shutdown(fd, SHUT_RDWR), void();
      } else if (q == 13) {  // PING
        uint32_t nonce = 0;
        if (!read_n(fd, &nonce, 4)) return;
        if (behaviour_ == Behaviour::silent) continue;
        if (behaviour_ == Behaviour::wrong_echo) nonce ^= 1;
        write_all(fd, std::string(reinterpret_cast<char*>(&nonce), 4));
      } else if (q == 1) {  // SET
        std::string k, v;
        if (!read_string(fd, k) || !read_string(fd, v)) return;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          values_[k] = v;
        }
        changed_.notify_all();
      } else if (q == 6) {  // WAIT
        uint64_t count = 0;
        std::string k;
        if (!read_n(fd, &count, 8) || count != 1 || !read_string(fd, k)) return;
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || values_.count(k) > 0; });
        if (stop_) return;
        lock.unlock();
        write_all(fd, std::string(1, '\0'));
      } else if (q == 3) {  // GET
        std::string k;
        if (!read_string(fd, k)) return;
        std::string v;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          v = values_[k];
        }
        uint64_t n = behaviour_ == Behaviour::huge_value ? (uint64_t{1} << 40) : v.size();
        write_all(fd, std::string(reinterpret_cast<char*>(&n), 8) + v);
      } else {
        return;
      }
    }
  }

  Behaviour behaviour_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stop_ = false;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
  std::map<std::string, std::string> values_;
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a key set by one client is read by another that waited for it") {
  FakeStore store;
  std::string got;
  std::thread reader([&] { got = AgentStoreClient("127.0.0.1", store.port(), 10s).wait_get("a/key"); });
  AgentStoreClient("127.0.0.1", store.port(), 10s).set("a/key", "10.0.0.1:4242");
  reader.join();
  CHECK(got == "10.0.0.1:4242");
}

TEST_CASE("errors name the address and what was expected") {
  SUBCASE("another kind of server answers the ping") {
    FakeStore store(Behaviour::wrong_echo);
    const auto e = error_of([&] { AgentStoreClient("127.0.0.1", store.port(), 5s); });
    CHECK(e.find("127.0.0.1:" + std::to_string(store.port()) + " (torchrun's store)") != std::string::npos);
    CHECK(e.find("instead of its nonce") != std::string::npos);
    CHECK(e.find("expected the 4-byte echo of its ping, as a PyTorch 2.x TCPStore sends") !=
          std::string::npos);
    CHECK_THROWS_AS(AgentStoreClient("127.0.0.1", store.port(), 5s), trainhook::distributed::NotA2xStore);
  }
  SUBCASE("the connection is closed") {
    FakeStore store(Behaviour::close_after_hello);
    const auto e =
        error_of([&] { AgentStoreClient("127.0.0.1", store.port(), 5s, "MASTER_ADDR:MASTER_PORT"); });
    CHECK(e.find("(MASTER_ADDR:MASTER_PORT) closed the connection after 0 bytes") != std::string::npos);
    // What a LibTorch 1.13 store does with a 2.x greeting: the caller joins it with a 1.13 client.
    CHECK_THROWS_AS(AgentStoreClient("127.0.0.1", store.port(), 5s), trainhook::distributed::NotA2xStore);
  }
  SUBCASE("no answer") {
    FakeStore store(Behaviour::silent);
    const auto e = error_of([&] { AgentStoreClient("127.0.0.1", store.port(), 300ms); });
    CHECK(e.find("sent no answer within") != std::string::npos);
    bool not_a_store = false;
    try {
      AgentStoreClient("127.0.0.1", store.port(), 300ms);
    } catch (const trainhook::distributed::NotA2xStore&) {
      not_a_store = true;
    } catch (const std::runtime_error&) {
    }
    CHECK(!not_a_store);  // silence is a timeout, not a store of another kind
  }
  SUBCASE("a value longer than any address") {
    FakeStore store(Behaviour::huge_value);
    AgentStoreClient setter("127.0.0.1", store.port(), 5s);
    setter.set("k", "v");
    const auto e = error_of([&] { (void)AgentStoreClient("127.0.0.1", store.port(), 5s).wait_get("k"); });
    CHECK(e.find("a value of 1099511627776 bytes (expected at most 4096)") != std::string::npos);
    CHECK(e.find("expected the value of key 'k'") != std::string::npos);
  }
  SUBCASE("a key that never comes") {
    FakeStore store;
    const auto e =
        error_of([&] { (void)AgentStoreClient("127.0.0.1", store.port(), 300ms).wait_get("never"); });
    CHECK(e.find("expected the STOP_WAITING byte once key 'never' is set") != std::string::npos);
  }
  SUBCASE("nothing listens") {
    uint16_t port = 0;
    {
      FakeStore gone;
      port = gone.port();
    }
    const auto e = error_of([&] { AgentStoreClient("127.0.0.1", port, 2s); });
    CHECK(e.find("cannot connect to 127.0.0.1:" + std::to_string(port)) != std::string::npos);
    // How a rank tells an earlier attempt's store address (its store is gone) from this attempt's.
    std::string why;
    CHECK(!trainhook::distributed::accepts_connections("127.0.0.1", port,
                                                       std::chrono::steady_clock::now() + 2s, why));
    CHECK(why == "Connection refused");
    FakeStore live;
    CHECK(trainhook::distributed::accepts_connections("127.0.0.1", live.port(),
                                                      std::chrono::steady_clock::now() + 2s, why));
  }
}
