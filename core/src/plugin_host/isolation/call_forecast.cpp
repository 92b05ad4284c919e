#include "call_forecast.hpp"

namespace trainhook::detail::isolation {

std::optional<CallForecast::Clock::time_point> CallForecast::announced(Clock::time_point now) {
  announced_at_ = now;
  if (!known_ || typical_ > kLongest) return std::nullopt;
  // A quarter more than usual, and the margin: a call a little late still
  // finds the helper looking; one much later costs the wake it would anyway.
  return now + typical_ + typical_ / 4 + kMargin;
}

void CallForecast::called(Clock::time_point now) {
  if (!announced_at_) return;  // a call nobody announced teaches nothing
  const Clock::duration gap = now - *announced_at_;
  announced_at_.reset();
  if (gap < Clock::duration::zero()) return;
  // Smoothed over about four calls: one slow step (a save, a page fault)
  // does not stop the forecasts, a lasting change moves them within a few.
  typical_ = known_ ? typical_ + (gap - typical_) / 4 : gap;
  known_ = true;
}

}  // namespace trainhook::detail::isolation
