// The isolation timing policy, torch-free and clock-free. CallRhythm: a beat
// is followed once steady, the window opens the lead before the call is due
// and closes after its lateness, a missed window or an irregular gap stops
// it, slow beats and unknown events are not followed, and the earliest of
// several beats comes first. The helper's idle plan follows a beat only when
// asked to; the producer wakes a helper for records in bursts.
#include "isolation/wake_policy.hpp"

#include <doctest/doctest.h>

namespace iso = trainhook::detail::isolation::wake_policy;
using Clock = iso::Clock;
using std::chrono::microseconds;

namespace {
constexpr int32_t kStepEnd = 9;
constexpr int32_t kLog = 13;

// `n` calls of `event`, `gap` apart from `start`; the time of the last.
Clock::time_point beat(iso::CallRhythm& r, int32_t event, Clock::time_point start, microseconds gap, int n) {
  Clock::time_point t = start;
  for (int i = 0; i < n; ++i) {
    if (i > 0) t += gap;
    r.called(event, t);
  }
  return t;
}
}  // namespace

TEST_CASE("call rhythm: a steady beat opens a window around its next call") {
  iso::CallRhythm r;
  const Clock::time_point t0{};
  // Four calls (three gaps) are not yet steady: the first gap only sets the period.
  Clock::time_point last = beat(r, kStepEnd, t0, microseconds(200), 4);
  CHECK_FALSE(r.next(last));
  r.called(kStepEnd, last += microseconds(200));
  const auto w = r.next(last);
  REQUIRE(w);
  CHECK(r.period(kStepEnd) == microseconds(200));
  // Exact gaps: no spread, so the lead and the lateness alone.
  CHECK(w->wake_at == last + microseconds(200) - iso::kWakeLead);
  CHECK(w->give_up_at == last + microseconds(200) + iso::kLateness);
  // Still the window while inside it; none once it has closed.
  CHECK(r.next(w->wake_at + microseconds(10)));
  CHECK_FALSE(r.next(w->give_up_at));
}

TEST_CASE("call rhythm: a missed window stops the beat until it is steady again") {
  iso::CallRhythm r;
  Clock::time_point last = beat(r, kStepEnd, Clock::time_point{}, microseconds(300), 6);
  const auto w = r.next(last);
  REQUIRE(w);
  r.missed(w->give_up_at);
  CHECK_FALSE(r.next(w->give_up_at));  // one window per stop, not one per period
  // The calls resume after a pause, at the same beat: the pause's gap moves
  // the smoothed period, and the beat is followed again once it has settled.
  last = w->give_up_at + microseconds(1000);
  r.called(kStepEnd, last);
  last = beat(r, kStepEnd, last + microseconds(300), microseconds(300), 3);
  CHECK_FALSE(r.next(last));
  last = beat(r, kStepEnd, last + microseconds(300), microseconds(300), 8);
  CHECK(r.next(last));
}

TEST_CASE("call rhythm: an irregular gap stops the beat and jitter widens the window") {
  iso::CallRhythm r;
  Clock::time_point last = beat(r, kStepEnd, Clock::time_point{}, microseconds(200), 6);
  REQUIRE(r.next(last));
  r.called(kStepEnd, last += microseconds(1000));  // a save's step: five times the period
  CHECK_FALSE(r.next(last));
  // Gaps of 180 and 220 us: steady (within a quarter), with a spread that widens the window.
  iso::CallRhythm j;
  Clock::time_point t{};
  for (int i = 0; i < 12; ++i) j.called(kStepEnd, t += microseconds(i % 2 == 0 ? 180 : 220));
  const auto w = j.next(t);
  REQUIRE(w);
  const auto due = t + j.period(kStepEnd);
  CHECK(due - w->wake_at > iso::kWakeLead);
  CHECK(w->give_up_at - due > iso::kLateness);
}

TEST_CASE("call rhythm: slow beats, unknown events and calls back in time are not followed") {
  iso::CallRhythm r;
  Clock::time_point last = beat(r, kStepEnd, Clock::time_point{}, microseconds(5000), 8);
  CHECK_FALSE(r.next(last));  // a wake is small beside 5 ms between calls
  last = beat(r, 40, last, microseconds(200), 8);
  CHECK_FALSE(r.next(last));
  r.called(-1, last);
  CHECK(r.period(40) == Clock::duration::zero());
  iso::CallRhythm back;
  const Clock::time_point t0 = Clock::time_point{} + microseconds(10000);
  back.called(kLog, t0);
  back.called(kLog, t0 - microseconds(100));  // a clock going back teaches nothing
  CHECK(back.period(kLog) == Clock::duration::zero());
}

TEST_CASE("call rhythm: of two beats the window that closes first comes first") {
  iso::CallRhythm r;
  const Clock::time_point t0{};
  beat(r, kStepEnd, t0, microseconds(400), 6);  // last at 2000, next due 2400
  const auto log_last =
      beat(r, kLog, t0 + microseconds(100), microseconds(300), 7);  // last at 1900, due 2200
  const auto w = r.next(log_last);
  REQUIRE(w);
  CHECK(w->give_up_at == t0 + microseconds(2200) + iso::kLateness);
  const auto after = r.next(w->give_up_at);
  REQUIRE(after);
  CHECK(after->give_up_at == t0 + microseconds(2400) + iso::kLateness);
}

TEST_CASE("wake policy: the idle helper follows a steady beat only when it may, else sleeps its latency") {
  iso::CallRhythm r;
  const Clock::time_point t0{};
  const Clock::time_point last = beat(r, kStepEnd, t0, microseconds(200), 6);
  const Clock::time_point now = last + microseconds(10);
  const iso::IdlePlan follow = iso::plan_idle(r, true, now);
  CHECK(follow.beat);
  CHECK(follow.sleep_until == last + microseconds(200) - iso::kWakeLead);
  CHECK(follow.look_until == last + microseconds(200) + iso::kLateness);
  const iso::IdlePlan alone = iso::plan_idle(r, false, now);  // one CPU: looking would only delay the trainer
  CHECK_FALSE(alone.beat);
  CHECK(alone.sleep_until == now + iso::kObserverLatency);
  CHECK(alone.look_until == now);
  // Past the window's start: no sleep, look at once until it closes.
  const iso::IdlePlan late = iso::plan_idle(r, true, last + microseconds(150));
  CHECK(late.sleep_until == last + microseconds(150));
}

TEST_CASE("wake policy: a helper is woken for records once the ring is an eighth full or one has waited") {
  CHECK_FALSE(iso::wake_for_records(100, 4096, std::nullopt));
  CHECK(iso::wake_for_records(4096 / iso::kWakeFillDivisor, 4096, std::nullopt));
  CHECK_FALSE(iso::wake_for_records(100, 4096, iso::kObserverLatency / 2));
  CHECK(iso::wake_for_records(100, 4096, iso::kObserverLatency));
}
