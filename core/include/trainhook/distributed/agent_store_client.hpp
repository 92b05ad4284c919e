// A client of torchrun's agent store (PyTorch 2.x's TCPStore protocol,
// agent_store_protocol.hpp) with the three operations trainhook needs there:
// set a key, and wait for a key then get it. A LibTorch 1.13 build uses it to
// publish the address of rank 0's own store, which 1.13's c10d client then
// reaches (process_group.cpp). No LibTorch here.
#pragma once

#include <trainhook/distributed/agent_store_protocol.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace trainhook::distributed {

// The listener at the agent store's address closed the connection, or
// answered with other bytes, when greeted in the 2.x protocol: not a PyTorch
// 2.x store (Debian's torchrun 1.13 serves a 1.13 store there, which a 1.13
// client joins as it is).
class NotA2xStore : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class AgentStoreClient {
 public:
  // Connects to host:port and checks that a 2.x store answers there
  // (VALIDATE, then a PING whose nonce must come back), all within `timeout`.
  // `what` names the address in errors (e.g. "MASTER_ADDR:MASTER_PORT").
  // Throws std::runtime_error naming host:port, `what` and what was expected;
  // NotA2xStore when something answers there, but not as a 2.x store.
  AgentStoreClient(std::string host, uint16_t port, std::chrono::milliseconds timeout,
                   std::string what = "torchrun's store");
  ~AgentStoreClient();
  AgentStoreClient(const AgentStoreClient&) = delete;
  AgentStoreClient& operator=(const AgentStoreClient&) = delete;

  // Keys are sent with a leading '/', as torch's own TCPStore clients send
  // theirs (Python's store.get("k") asks for "/k"), so a key set here reads
  // back from Python by its name and the other way round.
  // SET, then a PING round trip: once it returns, the key is in the store
  // (the server answers a connection's queries in order).
  void set(std::string_view key, std::string_view value);
  // WAIT until `key` exists, then GET its value; the whole bounded by the
  // timeout given at construction (counted from this call).
  std::string wait_get(std::string_view key);

  const std::string& where() const noexcept { return where_; }  // "host:port (what)"

 private:
  void send_all(const std::string& bytes, const char* request);
  // Reads until `read` (an agent_store reader) says the reply is complete;
  // returns its value. Throws on a closed connection, an invalid reply or the deadline.
  std::string receive(const std::function<agent_store::Reply(std::string_view)>& read, const char* expected);
  void ping();
  [[noreturn]] void fail_answer(const std::string& message) const;

  int fd_ = -1;
  std::string where_;
  std::chrono::milliseconds timeout_;
  std::chrono::steady_clock::time_point deadline_;
  std::string buffer_;  // received, not yet consumed
  uint32_t nonce_ = 0;
  bool greeting_ = false;  // in the VALIDATE/PING exchange
};

// Whether something accepts a TCP connection at host:port before `deadline`
// (closed again at once); `error` says why not.
bool accepts_connections(const std::string& host, uint16_t port,
                         std::chrono::steady_clock::time_point deadline, std::string& error);

}  // namespace trainhook::distributed
