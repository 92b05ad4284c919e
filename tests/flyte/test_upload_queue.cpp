#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/flyte/upload_queue.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <vector>

using namespace trainhook::flyte;
namespace support = trainhook::support;
using trainhook::LogLevel;
using Status = UploadOutcome::Status;

namespace {
struct Capture {
  std::mutex mu;
  std::vector<std::string> lines;
  support::Logger logger() {
    return [this](LogLevel, const std::string& m) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(m);
    };
  }
  bool has(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& l : lines)
      if (l.find(s) != std::string::npos) return true;
    return false;
  }
};
}  // namespace

TEST_CASE("upload queue: a newer checkpoint replaces the waiting one, never the running one") {
  Capture cap;
  UploadQueue q(cap.logger());
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::vector<std::string> ran;
  std::mutex ran_mu;
  int cleanups = 0;
  auto job = [&](const std::string& name, bool block) {
    return UploadJob{name, "checkpoint",
                     [&, name, block](const Cancellation&) {
                       if (block) {
                         started.set_value();
                         gate.wait();
                       }
                       std::lock_guard<std::mutex> lock(ran_mu);
                       ran.push_back(name);
                     },
                     [&] { ++cleanups; }};
  };
  q.enqueue(job("checkpoint-1", true));
  started.get_future().wait();  // checkpoint-1 is running
  q.enqueue(job("checkpoint-2", false));
  q.enqueue(job("checkpoint-3", false));  // supersedes checkpoint-2
  q.enqueue(UploadJob{"deck", "deck",
                      [&](const Cancellation&) {
                        std::lock_guard<std::mutex> lock(ran_mu);
                        ran.push_back("deck");
                      },
                      nullptr});  // another group: kept
  release.set_value();
  REQUIRE(q.wait_idle(std::chrono::seconds(30)));
  CHECK(ran == std::vector<std::string>{"checkpoint-1", "checkpoint-3", "deck"});
  CHECK(cleanups == 3);
  const auto out = q.outcomes();
  REQUIRE(out.size() == 4);
  CHECK(out[0].status == Status::uploaded);
  CHECK(out[1].status == Status::superseded);
  CHECK(out[1].detail.find("checkpoint-3") != std::string::npos);
  CHECK(out[2].status == Status::uploaded);
  CHECK(out[3].status == Status::uploaded);
  CHECK(cap.has("uploads are behind training: checkpoint-2 is skipped"));
}

TEST_CASE("upload queue: failures are reported, shutdown cancels a retrying job") {
  Capture cap;
  UploadQueue q(cap.logger());
  q.enqueue(
      {"bad", "a", [](const Cancellation&) { throw StoreError("HTTP 403 AccessDenied", false); }, nullptr});
  REQUIRE(q.wait_idle(std::chrono::seconds(30)));
  std::atomic<int> attempts{0};
  q.enqueue({"stuck", "a",
             [&](const Cancellation& c) {
               const auto p = support::RetryPolicy()
                                  .initial_delay(std::chrono::milliseconds(50))
                                  .max_elapsed(std::chrono::hours(1));
               with_retries(p, c, cap.logger(), "upload of stuck", [&] {
                 ++attempts;
                 throw StoreError("connection refused", true);
               });
             },
             nullptr});
  CHECK_FALSE(q.wait_idle(std::chrono::milliseconds(300)));
  q.shutdown();
  const auto out = q.outcomes();
  CHECK(out[0].status == Status::failed);
  CHECK(out[0].detail.find("AccessDenied") != std::string::npos);
  CHECK(out[1].status == Status::failed);
  CHECK(out[1].detail.find("cancelled") != std::string::npos);
  CHECK(attempts >= 1);
  q.enqueue({"late", "a", [](const Cancellation&) {}, nullptr});
  CHECK(q.outcomes().back().status == Status::not_started);
}

TEST_CASE("retry: a store that comes back within the budget loses nothing") {
  Capture cap;
  Cancellation never;
  auto p = FlyteOptions{}.retry();  // the plugin's policy, with shorter waits
  p.initial_delay(std::chrono::milliseconds(10));
  int calls = 0;
  with_retries(p, never, cap.logger(), "op", [&] {
    if (++calls < 4) throw StoreError("HTTP 503", true);
  });
  CHECK(calls == 4);
  CHECK(cap.has("op: succeeded on attempt 4"));
  p.max_elapsed(std::chrono::milliseconds(1));  // spent before the first wait
  CHECK_THROWS_WITH_AS(
      with_retries(p, never, cap.logger(), "op2", [&] { throw StoreError("HTTP 500", true); }),
      doctest::Contains("op2: gave up after 1 attempts"), StoreError);
  // flyte.retry_seconds is the policy's time limit; 0 means a single attempt
  // (support's max_elapsed 0 would mean "no limit").
  CHECK(FlyteOptions::parse(R"({"retry_seconds": 30})").retry().max_elapsed_ == std::chrono::seconds(30));
  const auto once = FlyteOptions::parse(R"({"retry_seconds": 0})").retry();
  CHECK(once.max_attempts_ == 1);
  calls = 0;
  CHECK_THROWS_WITH_AS(with_retries(once, never, cap.logger(), "op3",
                                    [&] {
                                      ++calls;
                                      throw StoreError("HTTP 500", true);
                                    }),
                       doctest::Contains("op3: gave up after 1 attempts"), StoreError);
  CHECK(calls == 1);
}
