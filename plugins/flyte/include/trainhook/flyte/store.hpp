// A place checkpoints are uploaded to and restored from: a local/mounted folder
// or an S3-compatible bucket prefix. Keys are '/'-separated and relative to the
// store's root (the configured prefix).
//
// Thread-safety: one store is used by one thread at a time (the upload worker,
// or the training thread during restore before any upload starts).
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/support/log.hpp>
#include <trainhook/support/retry.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook::flyte {

struct ObjectInfo {
  std::string key;  // relative to the store root
  uint64_t size = 0;
};

// An operation failed. `retryable` says whether trying again later may help
// (connection errors, 5xx, a folder that is temporarily not writable) or not
// (403, a malformed request).
class StoreError : public std::runtime_error {
 public:
  StoreError(const std::string& what, bool retryable) : std::runtime_error(what), retryable_(retryable) {}
  bool retryable() const noexcept { return retryable_; }

 private:
  bool retryable_;
};

class Store {
 public:
  virtual ~Store() = default;
  // For logs: the location, never credentials.
  virtual std::string describe() const = 0;
  // Every object whose key starts with key_prefix ("" = all).
  virtual std::vector<ObjectInfo> list(const std::string& key_prefix) = 0;
  // Uploads a local file's bytes under key, streamed from disk; replaces an
  // existing object. Readers never see a partial object.
  virtual void put_file(const std::filesystem::path& file, const std::string& key) = 0;
  // Downloads key into file (parent folders created), streamed to disk.
  virtual void get_file(const std::string& key, const std::filesystem::path& file) = 0;
};

// Runs a store operation until it succeeds, on support's retry loop: a store
// that goes away for a while (S3 5xx, a connection refused, a mounted folder
// that is read-only) loses nothing as long as it comes back within the policy
// (FlyteOptions::retry: flyte.retry_seconds as max_elapsed). Rethrows a
// non-retryable StoreError at once; throws a retryable StoreError "<what>: gave
// up after N attempts: ..." when the policy is spent, and a non-retryable one
// when cancelled. `what` names the operation in log lines.
void with_retries(const support::RetryPolicy& policy, const Cancellation& cancel, const support::Logger& log,
                  const std::string& what, const std::function<void()>& op);

}  // namespace trainhook::flyte
