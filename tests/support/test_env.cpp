// support::get_env. (A plugin's own settings and their variables are tested
// with the option table: tests/sdk/test_options.cpp.)
#include <doctest/doctest.h>
#include <trainhook/support/env.hpp>

#include <cstdlib>

TEST_CASE("get_env treats empty as unset") {
  ::setenv("TH_SUPPORT_TEST_EMPTY", "", 1);
  ::setenv("TH_SUPPORT_TEST_SET", "abc", 1);
  CHECK_FALSE(trainhook::support::get_env("TH_SUPPORT_TEST_EMPTY").has_value());
  CHECK(trainhook::support::get_env("TH_SUPPORT_TEST_SET").value() == "abc");
  CHECK_FALSE(trainhook::support::get_env("TH_SUPPORT_TEST_SURELY_UNSET").has_value());
}
