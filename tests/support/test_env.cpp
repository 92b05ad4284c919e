#include <doctest/doctest.h>
#include <trainhook/plugin.hpp>
#include <trainhook/support/env.hpp>

#include <cstdlib>

using trainhook::support::is_truthy;
using trainhook::support::Settings;

TEST_CASE("is_truthy accepts 1/ON/YES/TRUE in any case and nothing else") {
  for (const char* v : {"1", "on", "ON", "On", "yes", "YES", "true", "TRUE", "True", " true "})
    CHECK(is_truthy(v));
  for (const char* v : {"0", "off", "no", "false", "", "2", "y", "enabled"}) CHECK_FALSE(is_truthy(v));
}

TEST_CASE("get_env treats empty as unset") {
  ::setenv("TH_SUPPORT_TEST_EMPTY", "", 1);
  ::setenv("TH_SUPPORT_TEST_SET", "abc", 1);
  CHECK_FALSE(trainhook::support::get_env("TH_SUPPORT_TEST_EMPTY").has_value());
  CHECK(trainhook::support::get_env("TH_SUPPORT_TEST_SET").value() == "abc");
  CHECK_FALSE(trainhook::support::get_env("TH_SUPPORT_TEST_SURELY_UNSET").has_value());
}

TEST_CASE("Settings: config key wins over the environment variable") {
  ::setenv("TH_SUPPORT_URI", "http://env", 1);
  Settings s(R"({"uri": "http://config", "n": 7, "on": true})", "demo");
  CHECK(s.get("uri", "TH_SUPPORT_URI").value() == "http://config");
  CHECK(s.get("missing", "TH_SUPPORT_URI").value() == "http://env");
  CHECK(s.integer("n", nullptr, 1) == 7);
  CHECK(s.flag("on", nullptr, false));
  CHECK(s.integer("absent", nullptr, 42) == 42);
  CHECK(s.number("absent", nullptr, 2.5) == doctest::Approx(2.5));
  CHECK(s.source_of("uri", "TH_SUPPORT_URI") == "plugin_config demo.uri");
  CHECK(s.source_of("missing", "TH_SUPPORT_URI") == "environment variable TH_SUPPORT_URI");
  CHECK(s.unknown_keys({"uri", "n"}) == std::vector<std::string>{"on"});
}

TEST_CASE("Settings: bad values name their source") {
  ::setenv("TH_SUPPORT_BAD_INT", "12x", 1);
  Settings s("{}", "demo");
  try {
    s.integer("max", "TH_SUPPORT_BAD_INT", 0);
    FAIL("expected ConfigError");
  } catch (const trainhook::ConfigError& e) {
    CHECK(std::string(e.what()).find("environment variable TH_SUPPORT_BAD_INT") != std::string::npos);
    CHECK(std::string(e.what()).find("12x") != std::string::npos);
  }
  CHECK_THROWS_AS(Settings("[1,2]", "demo"), trainhook::ConfigError);
  CHECK_THROWS_WITH_AS(Settings("{oops", "demo"), doctest::Contains("'demo'"), trainhook::ConfigError);
  Settings t(R"({"ratio": "fast"})", "demo");
  CHECK_THROWS_WITH_AS(t.number("ratio", nullptr, 1.0), doctest::Contains("plugin_config demo.ratio"),
                       trainhook::ConfigError);
}

TEST_CASE("Settings: a bad value of a credential key is not echoed in the error") {
  Settings s(R"({"api_key": "SECRET-abc", "timeout": "SECRET-def"})", "demo");
  CHECK_THROWS_WITH_AS(s.number("api_key", nullptr, 1.0),
                       "plugin_config demo.api_key must be a number, got <API_KEY>", trainhook::ConfigError);
  ::setenv("TH_SUPPORT_TEST_TOKEN", "SECRET-ghi", 1);
  CHECK_THROWS_WITH_AS(
      s.integer(nullptr, "TH_SUPPORT_TEST_TOKEN", 1),
      "environment variable TH_SUPPORT_TEST_TOKEN must be an integer, got <TH_SUPPORT_TEST_TOKEN>",
      trainhook::ConfigError);
  // Ordinary keys still quote the value, which helps the user.
  CHECK_THROWS_WITH_AS(s.number("timeout", nullptr, 1.0), doctest::Contains("'SECRET-def'"),
                       trainhook::ConfigError);
}
