// Two ranks in one test process: each runs in its own thread with its own
// ProcessGroup over a TCPStore and Gloo on 127.0.0.1 (a free port), as two
// processes of `trainhook launch` would. Every collective is bounded by the
// group's timeout, so a test that breaks fails with CollectiveError instead of
// hanging.
#pragma once

#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

namespace trainhook::test {

// A port the kernel says is free on 127.0.0.1 (closed again at once; the store
// binds it a moment later).
inline uint16_t free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof(a);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port on 127.0.0.1");
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

using RankBody = std::function<void(int rank, const std::shared_ptr<distributed::ProcessGroup>& group)>;

// Runs `body` on ranks 0 and 1 at once and rethrows the first rank's failure
// (rank 0's before rank 1's). `timeout` bounds the rendezvous and every collective.
inline void on_two_ranks(const RankBody& body, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const uint16_t port = free_local_port();
  std::exception_ptr failed[2];
  auto run = [&](int rank) {
    try {
      distributed::LaunchEnv env;
      env.rank = rank;
      env.world_size = 2;
      env.local_rank = rank;
      env.local_world_size = 2;
      env.master_addr = "127.0.0.1";
      env.master_port = port;
      env.source = "test";
      auto group = distributed::ProcessGroup::create(env, DdpBackend::gloo, timeout);
      body(rank, group);
    } catch (...) {
      failed[rank] = std::current_exception();
    }
  };
  std::thread one(run, 1);
  run(0);
  one.join();
  for (const auto& f : failed) {
    if (f) std::rethrow_exception(f);
  }
}

}  // namespace trainhook::test
