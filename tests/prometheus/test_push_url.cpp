// push_url: the Pushgateway group path and redaction for messages.
#include <trainhook/prometheus/push_url.hpp>

#include <doctest/doctest.h>

using namespace trainhook::prometheus;

TEST_CASE("base64url uses the URL-safe alphabet without padding") {
  CHECK(base64url("") == "=");
  CHECK(base64url("f") == "Zg");
  CHECK(base64url("fo") == "Zm8");
  CHECK(base64url("foo") == "Zm9v");
  CHECK(base64url("foob") == "Zm9vYg");
  CHECK(base64url("\xfb\xff\xbf") == "-_-_");
  CHECK(base64url("/tmp/out") == "L3RtcC9vdXQ");
}

TEST_CASE("the group path carries job and run_name base64url-encoded") {
  CHECK(push_url("http://127.0.0.1:9091/", "trainhook", "/tmp/out") ==
        "http://127.0.0.1:9091/metrics/job@base64/dHJhaW5ob29r/run_name@base64/L3RtcC9vdXQ");
}

TEST_CASE("credentials never reach messages") {
  CHECK(redact_url("http://user:secret@pgw:9091/metrics/job@base64/eA") ==
        "http://***@pgw:9091/metrics/job@base64/eA");
  CHECK(redact_url("https://pgw:9091/metrics/job@base64/eA") == "https://pgw:9091/metrics/job@base64/eA");
  CHECK(redact_url("pgw:9091") == "pgw:9091");
}
