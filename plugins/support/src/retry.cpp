#include <trainhook/support/retry.hpp>

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace trainhook::support {

RetryDecision RetryClassification::decide(const HttpResponse& r) const {
  if (r.ok()) return RetryDecision::success;
  if (r.status == 0) return retry_transport_errors && !r.aborted ? RetryDecision::retry : RetryDecision::fail;
  if (never_retry.count(r.status) != 0) return RetryDecision::fail;
  if (retry_statuses.count(r.status) != 0) return RetryDecision::retry;
  if (retry_5xx && r.status >= 500 && r.status < 600) return RetryDecision::retry;
  return RetryDecision::fail;
}

Backoff::Backoff(RetryPolicy policy, uint64_t seed) : policy_(policy), rng_(seed) {}

std::chrono::milliseconds Backoff::next_delay(const HttpResponse* failed) {
  return next_delay(failed != nullptr ? retry_after(*failed) : std::nullopt);
}

std::chrono::milliseconds Backoff::next_delay(std::optional<std::chrono::milliseconds> hint) {
  const int n = attempt_++;
  if (hint) return std::min(*hint, policy_.max_retry_after_);
  double base = static_cast<double>(policy_.initial_.count()) * std::pow(policy_.multiplier_, n);
  base = std::min(base, static_cast<double>(policy_.max_.count()));
  double j = std::clamp(policy_.jitter_, 0.0, 1.0);
  std::uniform_real_distribution<double> dist(1.0 - j, 1.0 + j);
  double d = std::min(base * dist(rng_), static_cast<double>(policy_.max_.count()));
  return std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, d)));
}

std::optional<std::chrono::milliseconds> retry_after(const HttpResponse& response) {
  auto v = response.header("retry-after");
  if (!v || v->empty()) return std::nullopt;
  bool digits = std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits) {
    if (v->size() > 9) return std::chrono::milliseconds(std::chrono::hours(24));
    return std::chrono::milliseconds(std::stoll(*v) * 1000);
  }
  time_t when = curl_getdate(v->c_str(), nullptr);
  if (when < 0) return std::nullopt;
  time_t now = std::time(nullptr);
  return std::chrono::milliseconds(when > now ? (when - now) * 1000 : 0);
}

OperationResult retry_operation(const std::string& what, const RetryPolicy& policy, const Sleeper& sleep,
                                const Logger& log, const std::function<AttemptResult(int attempt)>& attempt) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  Backoff backoff(policy);
  OperationResult result;
  for (;;) {
    AttemptResult a = attempt(++result.attempts);
    result.decision = a.decision;
    if (a.decision == RetryDecision::success) {
      if (result.attempts > 1)
        log_to(log, LogLevel::info, what + ": succeeded on attempt " + std::to_string(result.attempts));
      return result;
    }
    result.error = std::move(a.error);
    if (a.decision == RetryDecision::fail) return result;
    if (policy.max_attempts_ > 0 && result.attempts >= policy.max_attempts_) return result;
    const auto delay = backoff.next_delay(a.retry_after);
    if (policy.max_elapsed_.count() > 0 && clock::now() + delay - start > policy.max_elapsed_) return result;
    log_to(log, LogLevel::warn,
           what + ": attempt " + std::to_string(result.attempts) + " failed (" + result.error +
               "); retrying in " + std::to_string(delay.count()) + " ms");
    if (!sleep(delay)) {
      result.interrupted = true;
      return result;
    }
  }
}

RetryResult send_with_retry(HttpClient& client, HttpRequest request, const RetryPolicy& policy,
                            const RetryClassification& classification, const Sleeper& sleep,
                            const BeforeRetry& before_retry) {
  RetryResult result;
  bool nothing_left = false;  // before_retry said the work is already done
  const OperationResult op = retry_operation(
      request.method + " " + request.url, policy, sleep, nullptr, [&](int attempt) -> AttemptResult {
        if (attempt > 1 && before_retry && !before_retry(request, result.response)) {
          nothing_left = true;
          return {};
        }
        result.response = client.perform(request);
        ++result.attempts;
        const RetryDecision decision = classification.decide(result.response);
        if (decision == RetryDecision::retry && result.response.ambiguous())
          result.ambiguous_failure_seen = true;
        if (decision == RetryDecision::success) return {};
        return {decision, result.response.describe(), retry_after(result.response)};
      });
  result.decision = nothing_left ? RetryDecision::success : op.decision;
  result.interrupted = op.interrupted;
  return result;
}

}  // namespace trainhook::support
