#include <trainhook/distributed/agent_store_protocol.hpp>

#include <cctype>

namespace trainhook::distributed::agent_store {
namespace {

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t get_le(std::string_view bytes, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return v;
}

void put_string(std::string& out, std::string_view s) {
  put_u64(out, s.size());
  out.append(s.data(), s.size());
}

std::string request(Query q) { return std::string(1, static_cast<char>(q)); }

Reply invalid(std::string problem) {
  Reply r;
  r.status = Reply::Status::invalid;
  r.problem = std::move(problem);
  return r;
}

Reply complete(size_t consumed, std::string value = {}) {
  Reply r;
  r.status = Reply::Status::complete;
  r.consumed = consumed;
  r.value = std::move(value);
  return r;
}

std::string hex_bytes(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
}

}  // namespace

std::string encode_hello(uint32_t nonce) {
  std::string out = request(Query::validate);
  put_u32(out, kValidationMagic);
  out += encode_ping(nonce);
  return out;
}

std::string encode_ping(uint32_t nonce) {
  std::string out = request(Query::ping);
  put_u32(out, nonce);
  return out;
}

std::string encode_set(std::string_view key, std::string_view value) {
  std::string out = request(Query::set);
  put_string(out, key);
  put_string(out, value);
  return out;
}

std::string encode_wait(std::string_view key) {
  std::string out = request(Query::wait);
  put_u64(out, 1);  // one key
  put_string(out, key);
  return out;
}

std::string encode_get(std::string_view key) {
  std::string out = request(Query::get);
  put_string(out, key);
  return out;
}

Reply read_ping_reply(std::string_view bytes, uint32_t nonce) {
  if (bytes.size() < 4) return {};
  if (get_le(bytes, 4) != nonce) {
    return invalid("answered the ping with bytes " + hex_bytes(bytes.substr(0, 4)) +
                   " instead of its nonce " + hex_bytes(encode_ping(nonce).substr(1)));
  }
  return complete(4);
}

Reply read_wait_reply(std::string_view bytes) {
  if (bytes.empty()) return {};
  if (static_cast<uint8_t>(bytes[0]) != kStopWaiting)
    return invalid("answered WAIT with byte " + hex_bytes(bytes.substr(0, 1)) +
                   " instead of STOP_WAITING (00)");
  return complete(1);
}

Reply read_get_reply(std::string_view bytes, uint64_t max_bytes) {
  if (bytes.size() < 8) return {};
  const uint64_t length = get_le(bytes, 8);
  if (length > max_bytes) {
    return invalid("answered GET with a value of " + std::to_string(length) + " bytes (expected at most " +
                   std::to_string(max_bytes) + ")");
  }
  if (bytes.size() - 8 < length) return {};
  return complete(8 + static_cast<size_t>(length), std::string(bytes.substr(8, static_cast<size_t>(length))));
}

std::string format_store_address(std::string_view host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string_view::npos;
  return (ipv6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

std::optional<StoreAddress> parse_store_address(std::string_view text, std::string& problem) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    problem = "no host:port";
    return std::nullopt;
  }
  std::string_view host = text.substr(0, colon);
  const std::string_view port = text.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    for (const char c : host) {
      if (std::isxdigit(static_cast<unsigned char>(c)) == 0 && c != ':' && c != '.') {
        problem = "the IPv6 host holds a character that is not a hex digit, ':' or '.'";
        return std::nullopt;
      }
    }
  } else {
    for (const char c : host) {
      if (!host_char(c)) {
        problem = "the host holds a character that is not a letter, digit, '.', '-' or '_'";
        return std::nullopt;
      }
    }
  }
  if (host.empty() || host.size() > 255) {
    problem = "the host is empty or longer than 255 characters";
    return std::nullopt;
  }
  if (port.empty() || port.size() > 5) {
    problem = "the port is not a number in [1, 65535]";
    return std::nullopt;
  }
  uint32_t value = 0;
  for (const char c : port) {
    if (c < '0' || c > '9') {
      problem = "the port is not a number in [1, 65535]";
      return std::nullopt;
    }
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value < 1 || value > 65535) {
    problem = "the port is not a number in [1, 65535]";
    return std::nullopt;
  }
  return StoreAddress{std::string(host), static_cast<uint16_t>(value)};
}

}  // namespace trainhook::distributed::agent_store
