#include <trainhook/flyte/retry.hpp>

#include <trainhook/support/retry.hpp>

namespace trainhook::flyte {

void with_retries(const RetryPolicy& policy, const Cancellation& cancel, const Logger& log,
                  const std::string& what, const std::function<void()>& op) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + policy.budget;
  // The delays (exponential, with jitter so parallel writers do not retry in
  // lockstep) come from the support library; the time budget and the
  // cancellation are ours.
  support::Backoff backoff(support::RetryPolicy()
                               .initial_delay(policy.initial_backoff)
                               .max_delay(policy.max_backoff)
                               .jitter(0.25));
  for (int attempt = 1;; ++attempt) {
    if (cancel.cancelled()) throw StoreError(what + ": cancelled", false);
    try {
      op();
      if (attempt > 1) log(Level::info, what + ": succeeded on attempt " + std::to_string(attempt));
      return;
    } catch (const StoreError& e) {
      if (!e.retryable()) throw;
      const auto sleep = backoff.next_delay();
      if (clock::now() + sleep > deadline)
        throw StoreError(what + ": gave up after " + std::to_string(attempt) + " attempts: " + e.what(),
                         true);
      log(Level::warn, what + ": attempt " + std::to_string(attempt) + " failed (" + e.what() +
                           "); retrying in " + std::to_string(sleep.count()) + " ms");
      if (cancel.wait_for(sleep)) throw StoreError(what + ": cancelled while retrying: " + e.what(), false);
    }
  }
}

}  // namespace trainhook::flyte
