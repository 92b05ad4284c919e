// Retries for the plugins: which HTTP answers are worth retrying (a
// classification each integration tunes), exponential backoff with jitter,
// Retry-After, and one retry loop whose waits can be interrupted. The loop
// (retry_operation) takes any operation: an HTTP request (send_with_retry is
// built on it) or a store call, a file write (the flyte plugin's uploads).
//
//   RetryPolicy policy = RetryPolicy().initial_delay(1s).max_delay(30s).max_attempts(8);
//   RetryResult r = send_with_retry(http, request, policy, RetryClassification::standard(), sleeper);
#pragma once

#include <trainhook/support/http_client.hpp>
#include <trainhook/support/log.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>

namespace trainhook::support {

enum class RetryDecision { success, retry, fail };

// What to retry. Defaults follow common practice (and MLflow's Python client):
// connection errors, 408, 429 and every 5xx are retried; other answers fail.
struct RetryClassification {
  bool retry_transport_errors = true;
  bool retry_5xx = true;
  std::set<long> retry_statuses{408, 429};
  std::set<long> never_retry;  // wins over the two above (e.g. W&B: 400,401,403,404,409,410,413,422,501)

  static RetryClassification standard() { return {}; }
  RetryDecision decide(const HttpResponse& response) const;
};

class RetryPolicy {
 public:
  RetryPolicy& initial_delay(std::chrono::milliseconds v) {
    initial_ = v;
    return *this;
  }
  RetryPolicy& max_delay(std::chrono::milliseconds v) {
    max_ = v;
    return *this;
  }
  RetryPolicy& multiplier(double v) {
    multiplier_ = v;
    return *this;
  }
  // Fraction of the delay drawn at random, e.g. 0.25: delay * [0.75, 1.25].
  RetryPolicy& jitter(double v) {
    jitter_ = v;
    return *this;
  }
  // Total attempts including the first; 0 = unlimited.
  RetryPolicy& max_attempts(int v) {
    max_attempts_ = v;
    return *this;
  }
  // Stop retrying once this much time has passed since the first attempt; 0 = unlimited.
  RetryPolicy& max_elapsed(std::chrono::milliseconds v) {
    max_elapsed_ = v;
    return *this;
  }
  // Upper bound for a server's Retry-After.
  RetryPolicy& max_retry_after(std::chrono::milliseconds v) {
    max_retry_after_ = v;
    return *this;
  }

  std::chrono::milliseconds initial_{1000};
  std::chrono::milliseconds max_{std::chrono::seconds(60)};
  double multiplier_ = 2.0;
  double jitter_ = 0.25;
  int max_attempts_ = 0;
  std::chrono::milliseconds max_elapsed_{0};
  std::chrono::milliseconds max_retry_after_{std::chrono::minutes(5)};
};

// The delay sequence of one operation. Not thread-safe; one per operation or
// per worker. The n-th delay (0-based) is min(max, initial * multiplier^n) with
// jitter; a Retry-After on the failed response replaces it (capped).
class Backoff {
 public:
  explicit Backoff(RetryPolicy policy, uint64_t seed = std::random_device{}());
  std::chrono::milliseconds next_delay(const HttpResponse* failed = nullptr);
  // The same for any operation: `hint` (the other side's Retry-After, if it
  // gave one) replaces the computed delay, capped by max_retry_after.
  std::chrono::milliseconds next_delay(std::optional<std::chrono::milliseconds> hint);
  void reset() noexcept { attempt_ = 0; }
  int failures() const noexcept { return attempt_; }
  const RetryPolicy& policy() const noexcept { return policy_; }

 private:
  RetryPolicy policy_;
  int attempt_ = 0;
  std::mt19937_64 rng_;
};

// Retry-After as delta-seconds or an HTTP date; nullopt when absent or unreadable.
std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response);

// Waits for the given time; returns false if the wait was interrupted (the
// caller should give up). WorkerContext::sleep_for fits.
using Sleeper = std::function<bool(std::chrono::milliseconds)>;

// One attempt of an operation for retry_operation.
struct AttemptResult {
  RetryDecision decision = RetryDecision::success;
  std::string error;                                     // why it failed: for logs and the caller
  std::optional<std::chrono::milliseconds> retry_after;  // the other side's hint, if any
};

struct OperationResult {
  RetryDecision decision = RetryDecision::fail;  // success, fail (not retryable), retry (gave up)
  int attempts = 0;
  bool interrupted = false;  // the sleeper said stop
  std::string error;         // the last failed attempt's
};

// The retry loop. Calls attempt(n) for n = 1, 2, ... until it succeeds or fails
// for good, the policy's max_attempts or max_elapsed (counted from the first
// attempt, including the next wait) is spent, or sleep() is interrupted.
// attempt may throw: the exception ends the loop and reaches the caller.
// With a logger, each retry is logged as a warning
//   "<what>: attempt <n> failed (<error>); retrying in <ms> ms"
// and a success after failures as info "<what>: succeeded on attempt <n>".
OperationResult retry_operation(const std::string& what, const RetryPolicy& policy, const Sleeper& sleep,
                                const Logger& log, const std::function<AttemptResult(int attempt)>& attempt);

struct RetryResult {
  HttpResponse response;                         // the last answer
  RetryDecision decision = RetryDecision::fail;  // success, fail (not retryable), retry (gave up)
  int attempts = 0;
  bool interrupted = false;             // the sleeper said stop
  bool ambiguous_failure_seen = false;  // an earlier attempt may have taken effect
};

// Called before each retry with the request (modifiable) and the failed answer,
// e.g. to drop what the server already stored after an ambiguous failure.
// Return false to stop without sending (nothing left to do: counts as success).
using BeforeRetry = std::function<bool(HttpRequest&, const HttpResponse& failed)>;

RetryResult send_with_retry(HttpClient& client, HttpRequest request, const RetryPolicy& policy,
                            const RetryClassification& classification, const Sleeper& sleep,
                            const BeforeRetry& before_retry = nullptr);

}  // namespace trainhook::support
