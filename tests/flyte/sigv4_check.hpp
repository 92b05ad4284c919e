// An independent AWS Signature V4 computation for the tests (from the AWS
// documentation's algorithm), used to check the Authorization header that
// libcurl produced for our S3 requests.
#pragma once

#include <map>
#include <string>

namespace sigv4_check {

struct Request {
  std::string method;
  std::string path;                            // as sent, already URI-encoded
  std::string query;                           // as sent, without '?'
  std::map<std::string, std::string> headers;  // lower-case names, values as sent
};

// Canonical query per SigV4: parameters sorted by name, names and values
// RFC 3986-encoded ("a=" for a parameter without value).
std::string canonical_query(const std::string& query);

// Signature hex for the request, signing `signed_headers` (';'-separated,
// lower case) with the payload hash taken from x-amz-content-sha256.
std::string signature(const Request& r, const std::string& signed_headers, const std::string& secret,
                      const std::string& date /*YYYYMMDD*/, const std::string& region,
                      const std::string& service);

// The signing key (hex) of the AWS documentation's key-derivation example.
std::string signing_key_hex(const std::string& secret, const std::string& date, const std::string& region,
                            const std::string& service);

}  // namespace sigv4_check
