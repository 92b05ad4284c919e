// libFuzzer target: the readers of torchrun's agent store replies and of the
// store address published there (core/src/distributed/agent_store_protocol.cpp)
// on arbitrary bytes: each says incomplete, complete (consuming no more than it
// was given, a value no longer than allowed) or invalid with a reason; never
// crash, hang or read out of bounds.
#include <trainhook/distributed/agent_store_protocol.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace as = trainhook::distributed::agent_store;

namespace {
void check(const as::Reply& r, size_t size, uint64_t max_value) {
  switch (r.status) {
    case as::Reply::Status::complete:
      if (r.consumed == 0 || r.consumed > size || r.value.size() > max_value) std::abort();
      break;
    case as::Reply::Status::invalid:
      if (r.problem.empty()) std::abort();
      break;
    case as::Reply::Status::incomplete:
      if (r.consumed != 0 || !r.value.empty()) std::abort();
      break;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check(as::read_get_reply(bytes), size, as::kMaxValueBytes);
  check(as::read_get_reply(bytes, 16), size, 16);
  check(as::read_wait_reply(bytes), size, 0);
  check(as::read_ping_reply(bytes, 0x01020304u), size, 0);
  std::string problem;
  if (const auto a = as::parse_store_address(bytes, problem)) {
    if (a->host.empty() || a->host.size() > 255 || a->port == 0) std::abort();
    // What rank 0 publishes reads back as itself.
    std::string again;
    const auto b = as::parse_store_address(as::format_store_address(a->host, a->port), again);
    if (!b || b->host != a->host || b->port != a->port) std::abort();
  } else if (problem.empty()) {
    std::abort();
  }
  return 0;
}
