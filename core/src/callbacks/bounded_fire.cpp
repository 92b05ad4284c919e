#include <trainhook/callbacks/bounded_fire.hpp>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace trainhook {
namespace {

// Shared with the helper thread, which may outlive the call (an overrun).
struct Completion {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
};

}  // namespace

std::optional<FireOverrun> fire_bounded(CallbackHandler& handler, EventId event, const TrainerState& state,
                                        TrainerControl& control, const EventPayload& payload,
                                        const BoundedFireOptions& options) {
  using Clock = std::chrono::steady_clock;
  auto completion = std::make_shared<Completion>();
  const int signal_before = options.signal_received ? options.signal_received() : 0;
  std::thread helper([&handler, event, &state, &control, &payload, completion] {
    std::exception_ptr error;
    try {
      handler.fire(event, state, control, payload);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(completion->mu);
    completion->error = error;
    completion->done = true;
    completion->cv.notify_all();
  });
  const auto bound = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options.per_callback_seconds));
  const auto poll = std::chrono::milliseconds(options.poll_milliseconds > 0 ? options.poll_milliseconds : 50);
  // Each callback gets the whole bound: the clock restarts when the next one is called.
  uint64_t calls_seen = handler.calls_started();
  Clock::time_point callback_start = Clock::now();
  int signal_seen = 0;  // a new signal, told to on_signal; the grace runs until grace_end
  Clock::time_point grace_end;
  std::unique_lock<std::mutex> lock(completion->mu);
  while (!completion->cv.wait_for(lock, poll, [&] { return completion->done; })) {
    const Clock::time_point now = Clock::now();
    if (const uint64_t calls = handler.calls_started(); calls != calls_seen) {
      calls_seen = calls;
      callback_start = now;
    }
    const int sig = options.signal_received ? options.signal_received() : 0;
    if (sig != 0 && signal_before == 0 && signal_seen == 0 && options.on_signal) {
      signal_seen = sig;
      grace_end = now + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(options.signal_grace_seconds));
      lock.unlock();
      options.on_signal(sig);
      lock.lock();
      continue;
    }
    const bool signalled = sig != 0 && signal_before == 0;
    const bool grace_over = signal_seen != 0 && now >= grace_end;
    if ((signalled && signal_seen == 0) || grace_over || now - callback_start >= bound) {
      lock.unlock();
      helper.detach();  // still inside the callback: the caller leaves the process
      return FireOverrun{handler.running_callback(), signalled ? sig : 0,
                         std::chrono::duration<double>(now - callback_start).count(), false};
    }
  }
  const std::exception_ptr error = completion->error;
  lock.unlock();
  helper.join();
  if (error) std::rethrow_exception(error);
  if (signal_seen != 0) return FireOverrun{"", signal_seen, 0, true};
  return std::nullopt;
}

}  // namespace trainhook
