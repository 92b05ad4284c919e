// Two ranks in one test process: each runs in its own thread with its own
// ProcessGroup over a TCPStore and Gloo on 127.0.0.1 (a free port), as two
// processes of `trainhook launch` would. Every collective is bounded by the
// group's timeout, so a test that breaks fails with CollectiveError instead of
// hanging.
#pragma once

#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <free_port.hpp>

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>

namespace trainhook::test {

using RankBody = std::function<void(int rank, const std::shared_ptr<distributed::ProcessGroup>& group)>;

// Runs `body` on ranks 0 and 1 at once and rethrows the first rank's failure
// (rank 0's before rank 1's). `timeout` bounds the rendezvous and every collective.
inline void on_two_ranks(const RankBody& body, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const uint16_t port = trainhook::testkit::free_port();  // the store binds it a moment later
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
