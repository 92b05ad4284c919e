// A stop signal shared by the upload worker and its jobs: set once at shutdown
// (or when the train-end wait times out) so retry back-offs end at once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace trainhook::flyte {

class Cancellation {
 public:
  void cancel() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      cancelled_ = true;
      flag_ = true;
    }
    cv_.notify_all();
  }
  bool cancelled() const {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  // For HttpClientOptions::abort_flag: a transfer in flight stops on cancel().
  const std::atomic<bool>* flag() const noexcept { return &flag_; }
  // Sleeps up to d; returns true when cancelled (early or already).
  bool wait_for(std::chrono::milliseconds d) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [&] { return cancelled_; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;
  std::atomic<bool> flag_{false};
};

}  // namespace trainhook::flyte
