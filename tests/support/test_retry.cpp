#include <doctest/doctest.h>
#include <trainhook/support/retry.hpp>

#include "test_http_server.hpp"

#include <atomic>
#include <vector>

using namespace trainhook::support;
using namespace std::chrono_literals;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;

namespace {
HttpResponse status(long s) {
  HttpResponse r;
  r.status = s;
  return r;
}
// Records the delays instead of sleeping, so tests never wait.
struct RecordingSleeper {
  std::vector<std::chrono::milliseconds> delays;
  Sleeper fn() {
    return [this](std::chrono::milliseconds d) {
      delays.push_back(d);
      return true;
    };
  }
};
}  // namespace

TEST_CASE("standard classification: transport errors and 408 429 5xx retry while other 4xx fail") {
  auto c = RetryClassification::standard();
  CHECK(c.decide(status(200)) == RetryDecision::success);
  CHECK(c.decide(status(204)) == RetryDecision::success);
  CHECK(c.decide(status(0)) == RetryDecision::retry);
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L}) CHECK(c.decide(status(s)) == RetryDecision::retry);
  for (long s : {400L, 401L, 403L, 404L, 409L, 413L}) CHECK(c.decide(status(s)) == RetryDecision::fail);
  HttpResponse aborted = status(0);
  aborted.aborted = true;
  CHECK(c.decide(aborted) == RetryDecision::fail);
}

TEST_CASE("classification is configurable per integration") {
  RetryClassification wandb;
  wandb.never_retry = {400, 401, 403, 404, 409, 410, 413, 422, 501};
  CHECK(wandb.decide(status(501)) == RetryDecision::fail);
  CHECK(wandb.decide(status(502)) == RetryDecision::retry);
  RetryClassification no_transport;
  no_transport.retry_transport_errors = false;
  CHECK(no_transport.decide(status(0)) == RetryDecision::fail);
}

TEST_CASE("backoff grows exponentially within the jitter band and is capped") {
  Backoff b(RetryPolicy().initial_delay(100ms).multiplier(2).max_delay(1000ms).jitter(0.25), 42);
  const int expected[] = {100, 200, 400, 800, 1000, 1000};
  for (int e : expected) {
    auto d = b.next_delay().count();
    CHECK(d >= static_cast<int64_t>(e * 0.75) - 1);
    CHECK(d <= std::min<int64_t>(1000, static_cast<int64_t>(e * 1.25)));
  }
  b.reset();
  CHECK(b.next_delay().count() <= 125);
  Backoff exact(RetryPolicy().initial_delay(100ms).jitter(0), 1);
  CHECK(exact.next_delay().count() == 100);
  CHECK(exact.next_delay().count() == 200);
}

TEST_CASE("Retry-After: seconds and HTTP dates and it replaces the computed delay up to a cap") {
  HttpResponse r = status(429);
  r.headers["retry-after"] = "3";
  CHECK(retry_after(r).value() == 3000ms);
  Backoff b(RetryPolicy().initial_delay(10ms).max_retry_after(2000ms), 7);
  CHECK(b.next_delay(&r) == 2000ms);
  r.headers["retry-after"] = "Wed, 21 Oct 2015 07:28:00 GMT";  // in the past
  CHECK(retry_after(r).value() == 0ms);
  r.headers["retry-after"] = "soon";
  CHECK_FALSE(retry_after(r).has_value());
}

TEST_CASE("send_with_retry retries 503 then succeeds and honours Retry-After") {
  std::atomic<int> calls{0};
  TestHttpServer server([&](const TestRequest&) {
    TestReply r;
    int n = ++calls;
    if (n == 1) {
      r.status = 503;
    } else if (n == 2) {
      r.status = 429;
      r.headers.emplace_back("Retry-After", "7");
    }
    return r;
  });
  HttpClient http;
  RecordingSleeper sleeper;
  RetryResult res = send_with_retry(http, HttpRequest::post_json(server.url() + "/x", "{}"),
                                    RetryPolicy().initial_delay(50ms).jitter(0),
                                    RetryClassification::standard(), sleeper.fn());
  CHECK(res.decision == RetryDecision::success);
  CHECK(res.attempts == 3);
  CHECK(res.ambiguous_failure_seen);  // the 503
  REQUIRE(sleeper.delays.size() == 2);
  CHECK(sleeper.delays[0] == 50ms);
  CHECK(sleeper.delays[1] == 7000ms);
  CHECK(server.requests().size() == 3);
}

TEST_CASE("send_with_retry: a 400 is not retried and max_attempts bounds the retries") {
  TestHttpServer server([&](const TestRequest& q) {
    TestReply r;
    r.status = q.target == "/bad" ? 400 : 500;
    return r;
  });
  HttpClient http;
  RecordingSleeper sleeper;
  RetryResult bad = send_with_retry(http, HttpRequest::get(server.url() + "/bad"), RetryPolicy(),
                                    RetryClassification::standard(), sleeper.fn());
  CHECK(bad.decision == RetryDecision::fail);
  CHECK(bad.attempts == 1);
  RetryResult down = send_with_retry(http, HttpRequest::get(server.url() + "/down"),
                                     RetryPolicy().max_attempts(4).initial_delay(1ms),
                                     RetryClassification::standard(), sleeper.fn());
  CHECK(down.decision == RetryDecision::retry);
  CHECK(down.attempts == 4);
  CHECK(down.response.status == 500);
}

TEST_CASE("before_retry can rewrite or cancel the retry and an interrupted sleep stops") {
  TestHttpServer server([&](const TestRequest& q) {
    TestReply r;
    r.status = q.body == "second" ? 200 : 502;
    return r;
  });
  HttpClient http;
  RecordingSleeper sleeper;
  RetryResult rewritten = send_with_retry(http, HttpRequest::post_json(server.url() + "/", "first"),
                                          RetryPolicy().initial_delay(1ms), RetryClassification::standard(),
                                          sleeper.fn(), [](HttpRequest& req, const HttpResponse& failed) {
                                            CHECK(failed.status == 502);
                                            req.body = "second";
                                            return true;
                                          });
  CHECK(rewritten.decision == RetryDecision::success);
  CHECK(rewritten.attempts == 2);
  RetryResult cancelled = send_with_retry(http, HttpRequest::post_json(server.url() + "/", "first"),
                                          RetryPolicy(), RetryClassification::standard(), sleeper.fn(),
                                          [](HttpRequest&, const HttpResponse&) { return false; });
  CHECK(cancelled.decision == RetryDecision::success);
  CHECK(cancelled.attempts == 1);
  RetryResult interrupted =
      send_with_retry(http, HttpRequest::post_json(server.url() + "/", "first"), RetryPolicy(),
                      RetryClassification::standard(), [](std::chrono::milliseconds) { return false; });
  CHECK(interrupted.interrupted);
  CHECK(interrupted.decision == RetryDecision::retry);
}

TEST_CASE("retry_operation: any operation, logged retries, a late success is reported") {
  RecordingSleeper sleeper;
  std::vector<std::pair<trainhook::LogLevel, std::string>> lines;
  const Logger log = [&](trainhook::LogLevel l, const std::string& m) { lines.emplace_back(l, m); };
  const auto policy = RetryPolicy().initial_delay(100ms).jitter(0);
  const auto r = retry_operation("store put", policy, sleeper.fn(), log, [](int attempt) -> AttemptResult {
    if (attempt < 3) return {RetryDecision::retry, "status 503", std::nullopt};
    return {};
  });
  CHECK(r.decision == RetryDecision::success);
  CHECK(r.attempts == 3);
  CHECK(sleeper.delays == std::vector<std::chrono::milliseconds>{100ms, 200ms});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].first == trainhook::LogLevel::warn);
  CHECK(lines[0].second == "store put: attempt 1 failed (status 503); retrying in 100 ms");
  CHECK(lines[2].first == trainhook::LogLevel::info);
  CHECK(lines[2].second == "store put: succeeded on attempt 3");
}

TEST_CASE("retry_operation: fail stops at once, and attempts, time and an interrupted wait bound the retries") {
  RecordingSleeper sleeper;
  const auto policy = RetryPolicy().initial_delay(10ms).jitter(0);
  auto r = retry_operation("op", policy, sleeper.fn(), nullptr, [](int) -> AttemptResult {
    return {RetryDecision::fail, "denied", std::nullopt};
  });
  CHECK(r.decision == RetryDecision::fail);
  CHECK(r.attempts == 1);
  CHECK(r.error == "denied");
  CHECK(sleeper.delays.empty());

  r = retry_operation("op", RetryPolicy(policy).max_attempts(4), sleeper.fn(), nullptr,
                      [](int n) -> AttemptResult {
                        return {RetryDecision::retry, "try " + std::to_string(n), {}};
                      });
  CHECK(r.decision == RetryDecision::retry);  // gave up
  CHECK(r.attempts == 4);
  CHECK(r.error == "try 4");

  // The next wait would end past max_elapsed: give up before waiting.
  r = retry_operation("op", RetryPolicy(policy).max_elapsed(5ms), sleeper.fn(), nullptr,
                      [](int) -> AttemptResult {
                        return {RetryDecision::retry, "busy", {}};
                      });
  CHECK(r.decision == RetryDecision::retry);
  CHECK(r.attempts == 1);

  // A hint from the other side replaces the computed delay.
  RecordingSleeper hinted;
  retry_operation("op", RetryPolicy(policy).max_attempts(2), hinted.fn(), nullptr, [](int) -> AttemptResult {
    return {RetryDecision::retry, "slow down", 1234ms};
  });
  CHECK(hinted.delays == std::vector<std::chrono::milliseconds>{1234ms});

  const Sleeper stop = [](std::chrono::milliseconds) { return false; };
  r = retry_operation("op", policy, stop, nullptr, [](int) -> AttemptResult {
    return {RetryDecision::retry, "down", {}};
  });
  CHECK(r.interrupted);
  CHECK(r.attempts == 1);
  // An exception from the operation reaches the caller.
  CHECK_THROWS_AS(retry_operation("op", policy, sleeper.fn(), nullptr,
                                  [](int) -> AttemptResult { throw std::logic_error("bug"); }),
                  std::logic_error);
}
