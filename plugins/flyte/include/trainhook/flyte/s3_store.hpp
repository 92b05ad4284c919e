// Store on an S3-compatible bucket prefix (s3://bucket/prefix), path-style URLs
// (endpoint/bucket/key), every request signed by libcurl's SigV4 through the
// support library's HttpClient. Files above S3Config::multipart_threshold go as
// multipart uploads whose parts are streamed from disk. Each request is retried
// on connection errors, 408, 429 and 5xx; credentials never appear in logs or
// error messages.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/s3_config.hpp>
#include <trainhook/flyte/store.hpp>

#include <trainhook/support/http_client.hpp>
#include <trainhook/support/retry.hpp>

#include <memory>

namespace trainhook::flyte {

class S3Store final : public Store {
 public:
  // cancel (may be null) stops retries and transfers in flight; it must outlive the store.
  S3Store(S3Config config, std::string bucket, std::string prefix, const Cancellation* cancel = nullptr);
  std::string describe() const override;
  std::vector<ObjectInfo> list(const std::string& key_prefix) override;
  void put_file(const std::filesystem::path& file, const std::string& key) override;
  void get_file(const std::string& key, const std::filesystem::path& file) override;

  // Per-request retry policy (defaults: 5 attempts, 0.5 s .. 8 s back-off).
  void set_request_retry(const support::RetryPolicy& p) { request_retry_ = p; }
  // Path-style URL of an object key (relative to the prefix), exposed for tests.
  std::string object_url(const std::string& key) const;

 private:
  support::HttpResponse send(support::HttpRequest req, const std::string& what);
  void put_multipart(const std::filesystem::path& file, uint64_t size, const std::string& key);
  std::string full_key(const std::string& key) const;
  void sign_headers(support::HttpRequest& req, const std::string& payload_sha256) const;

  S3Config config_;
  std::string bucket_;
  std::string prefix_;
  const Cancellation* cancel_;
  support::RetryPolicy request_retry_;
  std::unique_ptr<support::HttpClient> http_;
};

}  // namespace trainhook::flyte
