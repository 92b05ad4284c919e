// CallForecast: when an announced call will come, learned from the last ones.
// The trainer announces a waited event a little before it fires it (a step's
// on_step_end while the optimizer steps); the isolated callback then wakes
// its helper at once and tells it to look for the call until the forecast
// time, so the call finds the helper awake instead of paying for waking it
// (14 to 35 us on a 2-vCPU VM, more than the call itself).
//
// The forecast is the smoothed time from announcement to call, with a margin.
// None is made until one call was seen (nothing known yet), nor when calls
// come later than kLongest after their announcement: the helper would spend
// that long looking, and a wake is then small beside the time between.
//
// Ownership: a plain value held by one IsolatedCallback per event; the caller
// passes the time, so tests need no clock.
#pragma once

#include <chrono>
#include <optional>

namespace trainhook::detail::isolation {

class CallForecast {
 public:
  using Clock = std::chrono::steady_clock;
  // Beyond this the helper would look for too long (its CPU per call).
  static constexpr std::chrono::microseconds kLongest{200};
  // Added to the smoothed time: the call's own jitter.
  static constexpr std::chrono::microseconds kMargin{20};

  // The event was announced at `now`: the time by which its call is due, or
  // nothing when no forecast is made (see the top).
  std::optional<Clock::time_point> announced(Clock::time_point now);
  // The event's call came at `now`: learns from the time since its announcement.
  void called(Clock::time_point now);

  // The smoothed time from announcement to call (zero before any call).
  Clock::duration typical() const noexcept { return typical_; }

 private:
  std::optional<Clock::time_point> announced_at_;
  Clock::duration typical_{};
  bool known_ = false;
};

}  // namespace trainhook::detail::isolation
