// The isolation layer's timing policy (see wake_policy.hpp).
#include "wake_policy.hpp"

#include <algorithm>

namespace trainhook::detail::isolation::wake_policy {

bool wake_for_records(uint64_t used, uint64_t capacity, std::optional<Clock::duration> oldest_wait) noexcept {
  return used >= capacity / kWakeFillDivisor || (oldest_wait && *oldest_wait >= kObserverLatency);
}

void CallRhythm::called(int32_t event, Clock::time_point now) {
  if (event < 0 || event >= kEvents) return;
  Beat& b = beats_[static_cast<size_t>(event)];
  const std::optional<Clock::time_point> last = b.last;
  b.last = now;
  if (!last || now <= *last) return;
  const Clock::duration gap = now - *last;
  if (b.period == Clock::duration::zero()) {
    b.period = gap;
    return;
  }
  const Clock::duration off = gap > b.period ? gap - b.period : b.period - gap;
  const Clock::duration tolerance = std::max<Clock::duration>(b.period / 4, kJitter);
  b.steady = off <= tolerance ? b.steady + 1 : 0;
  // Smoothed over about four calls: one late step does not move the beat.
  b.period += (gap - b.period) / 4;
  b.spread += (off - b.spread) / 4;
}

std::optional<CallRhythm::Window> CallRhythm::window(const Beat& b) const {
  if (!b.last || b.steady < kSteadyCalls || b.period > kLongestPeriod) return std::nullopt;
  const Clock::time_point due = *b.last + b.period;
  return Window{due - kWakeLead - 2 * b.spread, due + kLateness + 2 * b.spread};
}

std::optional<CallRhythm::Window> CallRhythm::next(Clock::time_point now) const {
  std::optional<Window> best;
  for (const Beat& b : beats_) {
    const std::optional<Window> w = window(b);
    if (w && w->give_up_at > now && (!best || w->give_up_at < best->give_up_at)) best = w;
  }
  return best;
}

void CallRhythm::missed(Clock::time_point now) {
  for (Beat& b : beats_) {
    const std::optional<Window> w = window(b);
    if (w && w->give_up_at <= now) b.steady = 0;
  }
}

Clock::duration CallRhythm::period(int32_t event) const {
  if (event < 0 || event >= kEvents) return {};
  return beats_[static_cast<size_t>(event)].period;
}

IdlePlan plan_idle(const CallRhythm& rhythm, bool follow_beat, Clock::time_point now) {
  if (follow_beat) {
    if (const std::optional<CallRhythm::Window> w = rhythm.next(now))
      return IdlePlan{std::max(w->wake_at, now), w->give_up_at, true};
  }
  return IdlePlan{now + kObserverLatency, now, false};
}

}  // namespace trainhook::detail::isolation::wake_policy
