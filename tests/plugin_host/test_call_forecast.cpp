// CallForecast, torch-free, on made-up times: no forecast before a call was
// seen, then the smoothed time from announcement to call with its margin; none
// while calls come later than kLongest, and again once they come sooner.
#include "isolation/call_forecast.hpp"

#include <doctest/doctest.h>

#include <chrono>

namespace iso = trainhook::detail::isolation;
using Clock = iso::CallForecast::Clock;
using std::chrono::microseconds;

namespace {

// Announces at `t`, then calls `gap` later; returns what the announcement forecast.
std::optional<Clock::time_point> step(iso::CallForecast& f, Clock::time_point& t, microseconds gap) {
  const auto due = f.announced(t);
  f.called(t + gap);
  t += microseconds(1000);
  return due;
}

}  // namespace

TEST_CASE("call forecast: none until a call was seen, then the usual time plus a quarter and the margin") {
  iso::CallForecast f;
  Clock::time_point t{};
  CHECK_FALSE(step(f, t, microseconds(70)).has_value());  // nothing known yet
  CHECK(f.typical() == microseconds(70));
  const auto due = f.announced(t);
  REQUIRE(due.has_value());
  CHECK(*due - t == std::chrono::nanoseconds(70000 + 17500) + iso::CallForecast::kMargin);
  f.called(t + microseconds(70));
  CHECK(f.typical() == microseconds(70));
}

TEST_CASE("call forecast: one slow call moves the forecast a quarter of the way, not all of it") {
  iso::CallForecast f;
  Clock::time_point t{};
  for (int i = 0; i < 5; ++i) step(f, t, microseconds(80));
  step(f, t, microseconds(180));
  CHECK(f.typical() == microseconds(105));
  CHECK(step(f, t, microseconds(80)).has_value());
}

TEST_CASE("call forecast: none while calls come later than kLongest, and again once they come sooner") {
  iso::CallForecast f;
  Clock::time_point t{};
  for (int i = 0; i < 3; ++i) step(f, t, microseconds(5000));  // a big model's optimizer step
  CHECK(f.typical() > iso::CallForecast::kLongest);
  CHECK_FALSE(step(f, t, microseconds(50)).has_value());
  for (int i = 0; i < 30; ++i) step(f, t, microseconds(50));
  CHECK(step(f, t, microseconds(50)).has_value());
}

TEST_CASE("call forecast: a call nobody announced, or one before its announcement, teaches nothing") {
  iso::CallForecast f;
  Clock::time_point t{};
  f.called(t);  // never announced
  CHECK_FALSE(f.announced(t).has_value());
  f.called(t - microseconds(10));  // a clock that went back: ignored
  CHECK(f.typical() == Clock::duration::zero());
  CHECK_FALSE(f.announced(t).has_value());
}
