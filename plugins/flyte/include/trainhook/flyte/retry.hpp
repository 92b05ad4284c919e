// Retrying a store operation with exponential back-off and jitter, bounded by a
// total time budget: a store that goes away for a while (S3 5xx, a connection
// refused, a mounted folder that is read-only) loses nothing as long as it comes
// back within the budget.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/log.hpp>
#include <trainhook/flyte/store.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace trainhook::flyte {

struct RetryPolicy {
  std::chrono::milliseconds budget{std::chrono::seconds(120)};  // give up after this long
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{std::chrono::seconds(8)};
};

// Runs op until it succeeds. Rethrows a non-retryable StoreError at once, a
// retryable one when the budget is spent, and throws StoreError (not
// retryable) when cancelled. `what` names the operation in log lines.
void with_retries(const RetryPolicy& policy, const Cancellation& cancel, const Logger& log,
                  const std::string& what, const std::function<void()>& op);

}  // namespace trainhook::flyte
