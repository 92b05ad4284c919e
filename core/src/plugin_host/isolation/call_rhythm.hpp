// CallRhythm: when the next call of a steady beat will come, learned by the
// helper from the calls it was sent. A waited event fired at every training
// step (on_step_end) reaches the helper at the step's period; a helper asleep
// when it comes must be woken by the trainer, which costs the trainer the wake
// (the futex system call, and on a VM the resumed idle vCPU: 30 us and more,
// several times the call itself). Knowing the beat, the helper wakes itself by
// its own timer a little before the call is due and looks for it, so the call
// finds it awake and the trainer pays no wake at all; announced or not.
//
// A beat is one event's calls. The first gap sets its period; it is steady
// once kSteadyCalls gaps in a row after that each stay within a quarter of the
// smoothed period (at least kJitter). Only beats of at most kLongestPeriod are
// followed: beyond that a wake is small beside the time between calls. The
// helper wakes kWakeLead (plus twice the gaps' spread) before the call is due
// and looks until it is kLateness (plus twice the spread) overdue; a call that misses its window puts the
// beat back to unsteady, so a beat that stopped costs the helper one window.
//
// Ownership: a plain value held by the runner's main thread; the caller passes
// the time, so tests need no clock.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

namespace trainhook::detail::isolation {

class CallRhythm {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kSteadyCalls = 3;
  static constexpr std::chrono::microseconds kLongestPeriod{2000};
  static constexpr std::chrono::microseconds kJitter{20};
  static constexpr std::chrono::microseconds kWakeLead{80};
  static constexpr std::chrono::microseconds kLateness{30};
  static constexpr int kEvents = 32;  // event ids above are not followed

  struct Window {
    Clock::time_point wake_at;     // sleep until then (when later than now)
    Clock::time_point give_up_at;  // then look for the call until this
  };

  // A call of `event` was seen at `now`.
  void called(int32_t event, Clock::time_point now);
  // The next window of a steady beat that has not passed by `now` (the
  // earliest), or nothing.
  std::optional<Window> next(Clock::time_point now) const;
  // The windows that passed by `now` went without their call: their beats
  // must be steady again before they are followed.
  void missed(Clock::time_point now);

  // The smoothed period of `event`'s beat (zero before two calls).
  Clock::duration period(int32_t event) const;

 private:
  struct Beat {
    std::optional<Clock::time_point> last;
    Clock::duration period{};
    Clock::duration spread{};  // smoothed distance of the gaps from the period
    int steady = 0;            // consecutive gaps within the tolerance
  };
  std::optional<Window> window(const Beat& b) const;

  std::array<Beat, kEvents> beats_{};
};

}  // namespace trainhook::detail::isolation
