// Where and as whom to talk S3, from the standard AWS environment variables:
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (default https://s3.<region>.amazonaws.com),
// AWS_REGION / AWS_DEFAULT_REGION (default us-east-1), AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (temporary credentials).
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::flyte {

struct S3Config {
  std::string endpoint;  // scheme://host[:port], no trailing '/'
  std::string region;
  std::string access_key_id;
  std::string secret_access_key;               // never logged
  std::string session_token;                   // never logged; empty = none
  uint64_t multipart_threshold = 64ull << 20;  // files larger than this go multipart
  uint64_t part_size = 16ull << 20;            // >= 5 MiB (S3's minimum except the last part)
  std::string ca_bundle;                       // PEM CAs to trust (flyte's ca_bundle); empty = the system's

  // Throws trainhook::ConfigError naming the missing variables.
  static S3Config from_environment();
  // "endpoint http://127.0.0.1:9000, region us-east-1, key AKIA…(20 chars)" — no secrets.
  std::string describe() const;
};

inline constexpr uint64_t kMinPartSize = 5ull << 20;

}  // namespace trainhook::flyte
