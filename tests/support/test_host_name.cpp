#include <doctest/doctest.h>
#include <trainhook/support/host_name.hpp>

#include <unistd.h>

using namespace trainhook::support;

TEST_CASE("host_name is gethostname's answer and the fallback only when there is none") {
  char buf[256] = {0};
  REQUIRE(::gethostname(buf, sizeof buf - 1) == 0);
  CHECK(host_name() == buf);
  CHECK(host_name("localhost") == (buf[0] != '\0' ? std::string(buf) : std::string("localhost")));
}
