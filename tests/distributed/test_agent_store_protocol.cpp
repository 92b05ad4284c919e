// The bytes of torchrun's agent store protocol: requests as torch 2.x's own
// client sends them (captured from torch 2.15's TCPStore client), and the
// readers of the replies and of the published store address on partial,
// wrong and hostile input.
#include <trainhook/distributed/agent_store_protocol.hpp>

#include <doctest/doctest.h>

#include <string>

namespace as = trainhook::distributed::agent_store;
using Status = as::Reply::Status;

namespace {
std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (const int c : b) s.push_back(static_cast<char>(c));
  return s;
}
}  // namespace

TEST_CASE("requests are those of torch 2.x's client") {
  // VALIDATE + magic, then PING + nonce, as one write.
  CHECK(as::encode_hello(0x0000799du) == bytes({0x00, 0xce, 0xf7, 0x85, 0x3c, 0x0d, 0x9d, 0x79, 0x00, 0x00}));
  CHECK(as::encode_set("/k1", "v1") ==
        bytes({0x01, 3, 0, 0, 0, 0, 0, 0, 0}) + "/k1" + bytes({2, 0, 0, 0, 0, 0, 0, 0}) + "v1");
  CHECK(as::encode_wait("/wantget") ==
        bytes({0x06, 1, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0}) + "/wantget");
  CHECK(as::encode_get("/wantget") == bytes({0x03, 8, 0, 0, 0, 0, 0, 0, 0}) + "/wantget");
}

TEST_CASE("GET's reply: partial, complete, too long") {
  const std::string reply = bytes({3, 0, 0, 0, 0, 0, 0, 0}) + "abc";
  for (size_t n = 0; n < reply.size(); ++n)
    CHECK(as::read_get_reply(reply.substr(0, n)).status == Status::incomplete);
  auto r = as::read_get_reply(reply + "trailing");
  CHECK(r.status == Status::complete);
  CHECK(r.consumed == reply.size());
  CHECK(r.value == "abc");
  r = as::read_get_reply(bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(r.status == Status::invalid);
  CHECK(r.problem.find("18446744073709551615 bytes (expected at most 4096)") != std::string::npos);
  CHECK(as::read_get_reply(bytes({17, 0, 0, 0, 0, 0, 0, 0}), 16).status == Status::invalid);
  CHECK(as::read_get_reply(bytes({0, 0, 0, 0, 0, 0, 0, 0})).status == Status::complete);  // an empty value
}

TEST_CASE("WAIT's and PING's replies") {
  CHECK(as::read_wait_reply("").status == Status::incomplete);
  CHECK(as::read_wait_reply(bytes({0})).status == Status::complete);
  const auto w = as::read_wait_reply(bytes({1}));  // WAIT_CANCELED: not something we asked for
  CHECK(w.status == Status::invalid);
  CHECK(w.problem.find("byte 01 instead of STOP_WAITING") != std::string::npos);
  CHECK(as::read_ping_reply(bytes({4, 3, 2}), 0x01020304u).status == Status::incomplete);
  CHECK(as::read_ping_reply(bytes({4, 3, 2, 1}), 0x01020304u).consumed == 4);
  const auto p = as::read_ping_reply("HTTP", 0x01020304u);  // another kind of server
  CHECK(p.status == Status::invalid);
  CHECK(p.problem.find("bytes 48545450 instead of its nonce 04030201") != std::string::npos);
}

TEST_CASE("the published store address") {
  std::string problem;
  auto a = as::parse_store_address("10.0.0.7:41234", problem);
  REQUIRE(a);
  CHECK(a->host == "10.0.0.7");
  CHECK(a->port == 41234);
  a = as::parse_store_address("[fe80::1]:29501", problem);
  REQUIRE(a);
  CHECK(a->host == "fe80::1");
  CHECK(as::format_store_address("fe80::1", 29501) == "[fe80::1]:29501");
  CHECK(as::format_store_address("node-1.cluster", 80) == "node-1.cluster:80");
  for (const char* bad : {"", ":80", "host", "host:", "host:0", "host:65536", "host:8o", "host:123456",
                          "ho st:80", "h;rm:80", "[zz]:80", "[]:80"}) {
    problem.clear();
    CHECK_MESSAGE(!as::parse_store_address(bad, problem), bad);
    CHECK_MESSAGE(!problem.empty(), bad);
  }
  CHECK(!as::parse_store_address(std::string(256, 'h') + ":80", problem));
  CHECK(as::parse_store_address(std::string(255, 'h') + ":80", problem));
}
