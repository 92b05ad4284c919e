// The isolation layer's timing policy, all of it: when the trainer wakes a
// helper, how long either side looks for the other before it sleeps, and the
// helper's own wake before a call it expects. Nothing else in isolation/
// holds a duration or decides a wake; the ring (event_ring.hpp) and the
// protocol only carry bytes.
//
// Why these numbers. On the machines we run on (small VMs), the expensive
// thing is not the call but the wake: a thread asleep in the kernel resumes
// only after its vCPU is resumed, which costs more than a whole call between
// two awake threads (docs/benchmarks.md gives the figures). Hence:
//  - Observed events (the ring) wake a sleeping helper only in bursts: once
//    the ring is an eighth full, or a record has waited kObserverLatency.
//    Else the helper finds them when its own sleep ends, after at most
//    kObserverLatency. A run with several isolated loggers then does not
//    preempt the training thread at every step.
//  - A waited call costs a wake only when the helper sleeps. After answering
//    one the helper looks for the next for kNextCallSpin (calls come in
//    bursts: on_step_end, then on_log); the trainer looks for the answer for
//    kAnswerSpin before it sleeps in poll().
//  - Calls at a steady beat (a waited on_step_end, once per step) are learned
//    by the helper (CallRhythm): it sleeps by its own timer until kWakeLead
//    before the next is due and looks until kLateness after, so the call
//    finds it awake without the trainer waking it. Only beats of at most
//    kLongestPeriod are followed: a slower beat makes a wake small beside the
//    time between calls, and looking would cost the helper CPU for nothing.
//  - What a helper sends unasked (a plugin thread's log or stop request) is
//    served at the next observed event once the helper flagged it in the
//    ring, and at least every kServeInterval of observed events.
//
// Ownership: plain values and functions; CallRhythm is held by the runner's
// main thread, and the caller passes the time, so tests need no clock.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>

namespace trainhook::detail::isolation::wake_policy {

using Clock = std::chrono::steady_clock;

// Observed events: the bound on a record's wait before its helper is woken,
// and the longest the helper sleeps with nothing to do.
constexpr std::chrono::milliseconds kObserverLatency{100};
// The ring's fill (a fraction of its capacity) that wakes a sleeping helper.
constexpr uint64_t kWakeFillDivisor = 8;
// Trainer: how long it looks for a waited call's answer before it sleeps.
constexpr std::chrono::microseconds kAnswerSpin{50};
// Helper: how long it looks for the next call after answering one.
constexpr std::chrono::microseconds kNextCallSpin{20};
// Trainer: the longest a helper's unasked messages wait while only observed
// events reach it (a dead helper is seen by then too).
constexpr std::chrono::milliseconds kServeInterval{50};
// CallRhythm: gaps within tolerance before a beat is followed; the slowest
// beat followed; the least tolerance; the helper's wake before the call is
// due and how long it looks after.
constexpr int kSteadyCalls = 3;
constexpr std::chrono::microseconds kLongestPeriod{2000};
constexpr std::chrono::microseconds kJitter{20};
constexpr std::chrono::microseconds kWakeLead{80};
constexpr std::chrono::microseconds kLateness{30};

// Producer (trainer): whether a push that left `used` of `capacity` bytes
// wakes the sleeping helper, given how long the oldest record it was not
// woken for has waited (nullopt: none).
bool wake_for_records(uint64_t used, uint64_t capacity, std::optional<Clock::duration> oldest_wait) noexcept;

// Helper: when the next call of a steady beat will come, learned from the
// calls it was sent (see the top).
class CallRhythm {
 public:
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

// Helper: what the main thread does when it has nothing to run.
struct IdlePlan {
  Clock::time_point sleep_until;  // sleep on the ring until then (or a wake)
  Clock::time_point look_until;   // then look for a call without sleeping until then
  bool beat = false;              // the plan follows a beat: a miss is told to the rhythm
};
// `follow_beat`: the helper may run beside the trainer (more than one CPU).
IdlePlan plan_idle(const CallRhythm& rhythm, bool follow_beat, Clock::time_point now);

}  // namespace trainhook::detail::isolation::wake_policy
