#include <checkpoint_sync/retry.hpp>

#include <algorithm>
#include <random>

namespace trainhook::checkpoint_sync {

void with_retries(const RetryPolicy& policy, const Cancellation& cancel, const Logger& log,
                  const std::string& what, const std::function<void()>& op) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + policy.budget;
  auto backoff = policy.initial_backoff;
  std::minstd_rand rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    if (cancel.cancelled()) throw StoreError(what + ": cancelled", false);
    try {
      op();
      if (attempt > 1) log(Level::info, what + ": succeeded on attempt " + std::to_string(attempt));
      return;
    } catch (const StoreError& e) {
      if (!e.retryable()) throw;
      // Full jitter in [backoff/2, backoff] so parallel writers do not retry in lockstep.
      const auto half = backoff.count() / 2;
      const auto sleep =
          std::chrono::milliseconds(half + static_cast<long>(rng() % static_cast<unsigned>(half + 1)));
      if (clock::now() + sleep > deadline)
        throw StoreError(what + ": gave up after " + std::to_string(attempt) + " attempts: " + e.what(),
                         true);
      log(Level::warn, what + ": attempt " + std::to_string(attempt) + " failed (" + e.what() +
                           "); retrying in " + std::to_string(sleep.count()) + " ms");
      if (cancel.wait_for(sleep)) throw StoreError(what + ": cancelled while retrying: " + e.what(), false);
      backoff = std::min(policy.max_backoff, backoff * 2);
    }
  }
}

}  // namespace trainhook::checkpoint_sync
