#include <trainhook/flyte/store.hpp>

namespace trainhook::flyte {

void with_retries(const support::RetryPolicy& policy, const Cancellation& cancel, const support::Logger& log,
                  const std::string& what, const std::function<void()>& op) {
  // Waits end early on cancel(); a StoreError says retry or not.
  const auto sleep = [&](std::chrono::milliseconds d) { return !cancel.wait_for(d); };
  const support::OperationResult r =
      support::retry_operation(what, policy, sleep, log, [&](int) -> support::AttemptResult {
        if (cancel.cancelled()) throw StoreError(what + ": cancelled", false);
        try {
          op();
          return {};
        } catch (const StoreError& e) {
          if (!e.retryable()) throw;
          return {support::RetryDecision::retry, e.what(), std::nullopt};
        }
      });
  if (r.decision == support::RetryDecision::success) return;
  if (r.interrupted) throw StoreError(what + ": cancelled while retrying: " + r.error, false);
  throw StoreError(what + ": gave up after " + std::to_string(r.attempts) + " attempts: " + r.error, true);
}

}  // namespace trainhook::flyte
