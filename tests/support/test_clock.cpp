#include <doctest/doctest.h>
#include <trainhook/support/clock.hpp>

#include <cmath>
#include <ctime>

using namespace trainhook::support;

TEST_CASE("the wall clock in seconds and milliseconds agrees with time()") {
  const double before = static_cast<double>(std::time(nullptr));
  const double s = unix_seconds();
  const int64_t ms = unix_millis();
  const double after = static_cast<double>(std::time(nullptr));
  CHECK(s >= before);
  CHECK(s < after + 1.0);
  CHECK(std::fabs(static_cast<double>(ms) / 1000.0 - s) < 1.0);
  CHECK(s > 1.6e9);  // seconds since 1970, not since boot
}
