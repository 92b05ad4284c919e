// The bytes of PyTorch 2.x's TCPStore protocol that trainhook needs to use
// torchrun's agent store (the store its elastic agent serves on MASTER_PORT
// and lends to the workers) from a build whose own c10d client cannot speak it
// (Debian's LibTorch 1.13). Only building requests and reading replies here:
// no sockets (agent_store_client.hpp), no LibTorch, so the readers of what
// the network sends are fuzzed and unit-tested alone.
//
// The protocol, as torch 2.x's client and servers (classic and libuv) use it:
// a request is one query byte and its arguments; a string or byte value is a
// 64-bit length then the bytes; integers are in the host's byte order (little
// endian on every machine torchrun's wheels ship for, and the only order
// written or read here). A new connection must first send VALIDATE with a
// 32-bit magic number, else the server ignores it; PING carries a 32-bit nonce
// that the server echoes. SET has no reply; WAIT answers one byte
// (STOP_WAITING) once every key exists; GET answers the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainhook::distributed::agent_store {

enum class Query : uint8_t { validate = 0, set = 1, get = 3, wait = 6, ping = 13 };
inline constexpr uint32_t kValidationMagic = 0x3C85F7CE;
inline constexpr uint8_t kStopWaiting = 0;
// Values trainhook keeps there are an address ("host:port"); anything longer
// than this is not ours (and not read into memory).
inline constexpr uint64_t kMaxValueBytes = 4096;

// What a new connection sends first: VALIDATE, then PING with `nonce` (the
// echo tells a live 2.x store from any other listener).
std::string encode_hello(uint32_t nonce);
std::string encode_ping(uint32_t nonce);
std::string encode_set(std::string_view key, std::string_view value);
std::string encode_wait(std::string_view key);
std::string encode_get(std::string_view key);

// A reply read from the bytes received so far.
struct Reply {
  enum class Status { incomplete, complete, invalid };
  Status status = Status::incomplete;
  size_t consumed = 0;  // bytes of the reply (complete only)
  std::string value;    // GET's value
  std::string problem;  // what was wrong (invalid only)
};

// PING's answer: the 4-byte nonce sent.
Reply read_ping_reply(std::string_view bytes, uint32_t nonce);
// WAIT's answer: one STOP_WAITING byte.
Reply read_wait_reply(std::string_view bytes);
// GET's answer: a 64-bit length (at most `max_bytes`), then the value.
Reply read_get_reply(std::string_view bytes, uint64_t max_bytes = kMaxValueBytes);

// The address rank 0 publishes for its own store: "host:port".
std::string format_store_address(std::string_view host, uint16_t port);
struct StoreAddress {
  std::string host;
  uint16_t port = 0;
};
// Reads "host:port" (a host of letters, digits, '.', '-', ':' for IPv6 in
// brackets or bare, at most 255 characters; a port 1-65535). nullopt with
// `problem` set when the text is not that.
std::optional<StoreAddress> parse_store_address(std::string_view text, std::string& problem);

}  // namespace trainhook::distributed::agent_store
