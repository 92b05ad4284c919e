#include <doctest/doctest.h>
#include <trainhook/support/clock.hpp>

#include <chrono>
#include <cmath>
#include <ctime>

using namespace trainhook::support;

namespace {
// time() reads the coarse clock, which may lag the fine one by a tick and so
// read a second behind it across a second boundary; system_clock reads the
// same fine clock unix_seconds does.
double system_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
}  // namespace

TEST_CASE("the wall clock in seconds and milliseconds agrees with the system clock") {
  const double before = system_seconds();
  const double s = unix_seconds();
  const int64_t ms = unix_millis();
  const double after = system_seconds();
  CHECK(s >= before - 0.01);
  CHECK(s <= after + 0.01);
  CHECK(std::fabs(static_cast<double>(ms) / 1000.0 - s) < 1.0);
  CHECK(s > 1.6e9);  // seconds since 1970, not since boot
  CHECK(std::fabs(s - static_cast<double>(std::time(nullptr))) < 2.0);
}
