#include <trainhook/flyte/s3_config.hpp>

#include <trainhook/plugin.hpp>

#include <doctest/doctest.h>

#include <cstdlib>

using namespace trainhook::flyte;

namespace {
void clear_aws_env() {
  for (const char* v : {"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
                        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"})
    ::unsetenv(v);
}
}  // namespace

TEST_CASE("s3 config: the AWS environment variables") {
  clear_aws_env();
  ::setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLEKEY", 1);
  CHECK_THROWS_WITH_AS(S3Config::from_environment(), doctest::Contains("AWS_SECRET_ACCESS_KEY"),
                       trainhook::ConfigError);
  ::setenv("AWS_SECRET_ACCESS_KEY", "very-secret", 1);
  S3Config c = S3Config::from_environment();
  CHECK(c.region == "us-east-1");
  CHECK(c.endpoint == "https://s3.us-east-1.amazonaws.com");
  ::setenv("AWS_DEFAULT_REGION", "eu-north-1", 1);
  ::setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/", 1);
  ::setenv("AWS_SESSION_TOKEN", "tok-secret", 1);
  c = S3Config::from_environment();
  CHECK(c.region == "eu-north-1");
  CHECK(c.endpoint == "http://127.0.0.1:9000");
  CHECK(c.session_token == "tok-secret");
  const std::string d = c.describe();
  CHECK(d.find("very-secret") == std::string::npos);
  CHECK(d.find("tok-secret") == std::string::npos);
  CHECK(d.find("AKIAEXAMPLEKEY") == std::string::npos);
  ::setenv("AWS_ENDPOINT_URL_S3", "localhost:9000", 1);
  CHECK_THROWS_WITH_AS(S3Config::from_environment(), doctest::Contains("must start with http://"),
                       trainhook::ConfigError);
  clear_aws_env();
}
