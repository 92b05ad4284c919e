#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/flyte/upload_delivery.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <vector>

using namespace trainhook::flyte;
namespace support = trainhook::support;
using trainhook::LogLevel;
using Status = support::RecordStatus;
using Queue = support::DeliveryQueue<Upload>;

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

// An upload queued on the integration base with flyte's Delivery: `outcomes`
// and `cancel` outlive the queue, as the callback's do.
struct Uploads {
  Capture cap;
  support::RecordOutcomes outcomes;
  Cancellation cancel;
  std::vector<Status> reported_undelivered;  // by the report, for what never started
  std::unique_ptr<Queue> q;
  explicit Uploads(std::chrono::milliseconds flush_timeout) {
    auto d = std::make_unique<UploadDelivery>(
        cap.logger(), outcomes, cancel, [this](const support::DeliveryResult<Upload>& r) {
          for (const auto& u : r.undelivered) reported_undelivered.push_back(outcomes.at(u.outcome).status);
        });
    d->set_flush_timeout(flush_timeout);
    q = std::make_unique<Queue>(std::move(d));
  }
  bool add(std::string name, std::string group, std::function<void(const Cancellation&)> run,
           std::function<void()> cleanup = nullptr) {
    Upload u;
    u.outcome = outcomes.add(name);
    u.name = std::move(name);
    u.group = std::move(group);
    u.run = std::move(run);
    u.cleanup = std::move(cleanup);
    return q->enqueue(std::move(u));
  }
};
}  // namespace

TEST_CASE("upload delivery: a newer checkpoint replaces the waiting one, never the running one") {
  Uploads up(std::chrono::seconds(30));
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::vector<std::string> ran;
  std::mutex ran_mu;
  std::atomic<int> cleanups{0};
  auto job = [&](const std::string& name, bool block) {
    return [&, name, block](const Cancellation&) {
      if (block) {
        started.set_value();
        gate.wait();
      }
      std::lock_guard<std::mutex> lock(ran_mu);
      ran.push_back(name);
    };
  };
  const auto count = [&] { ++cleanups; };
  REQUIRE(up.add("checkpoint-1", "checkpoint", job("checkpoint-1", true), count));
  started.get_future().wait();  // checkpoint-1 is running
  REQUIRE(up.add("checkpoint-2", "checkpoint", job("checkpoint-2", false), count));
  REQUIRE(
      up.add("checkpoint-3", "checkpoint", job("checkpoint-3", false), count));  // supersedes checkpoint-2
  CHECK(cleanups == 1);                                 // the superseded one's staging folder goes at once
  REQUIRE(up.add("deck", "deck", job("deck", false)));  // another group: kept
  release.set_value();
  REQUIRE(up.q->flush(std::chrono::seconds(30)));
  CHECK(ran == std::vector<std::string>{"checkpoint-1", "checkpoint-3", "deck"});
  CHECK(cleanups == 3);
  const auto out = up.outcomes.all();
  REQUIRE(out.size() == 4);
  CHECK(out[0].status == Status::delivered);
  CHECK(out[1].status == Status::superseded);
  CHECK(out[1].detail.find("checkpoint-3") != std::string::npos);
  CHECK(out[2].status == Status::delivered);
  CHECK(out[3].status == Status::delivered);
  CHECK(up.cap.has("uploads are behind training: checkpoint-2 is skipped"));
  up.q->finish(support::RunOutcome::finished);
  CHECK(up.reported_undelivered.empty());
}

TEST_CASE("upload delivery: failures are reported, the stop cancels a retrying job, later ones never start") {
  // The base waits this long at finish(), then stops the worker: that cancels the retry loop.
  Uploads up(std::chrono::milliseconds(300));
  REQUIRE(up.add("bad", "a", [](const Cancellation&) { throw StoreError("HTTP 403 AccessDenied", false); }));
  REQUIRE(up.q->flush(std::chrono::seconds(30)));
  std::atomic<int> attempts{0};
  std::promise<void> retrying;
  REQUIRE(up.add("stuck", "a", [&](const Cancellation& c) {
    const auto p = support::RetryPolicy()
                       .initial_delay(std::chrono::milliseconds(50))
                       .max_elapsed(std::chrono::hours(1));
    with_retries(p, c, up.cap.logger(), "upload of stuck", [&] {
      if (++attempts == 1) retrying.set_value();
      throw StoreError("connection refused", true);
    });
  }));
  retrying.get_future().wait();
  int cleaned = 0;
  REQUIRE(up.add(
      "waiting", "b", [](const Cancellation&) {}, [&] { ++cleaned; }));
  up.q->finish(support::RunOutcome::finished);
  CHECK(up.cancel.cancelled());
  const auto out = up.outcomes.all();
  REQUIRE(out.size() == 3);
  CHECK(out[0].status == Status::failed);
  CHECK(out[0].detail.find("AccessDenied") != std::string::npos);
  CHECK(out[1].status == Status::failed);
  CHECK(out[1].detail.find("cancelled") != std::string::npos);
  CHECK(attempts >= 1);
  CHECK(out[2].status == Status::not_started);
  CHECK(up.reported_undelivered == std::vector<Status>{Status::not_started});
  CHECK(cleaned == 1);
  CHECK_FALSE(up.add("late", "a", [](const Cancellation&) {}));  // the run is over
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
  CHECK(FlyteOptions::from_json(R"({"retry_seconds": 30})").retry().max_elapsed_ == std::chrono::seconds(30));
  const auto once = FlyteOptions::from_json(R"({"retry_seconds": 0})").retry();
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
