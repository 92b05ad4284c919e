// A small blocking HTTP client on libcurl, meant to run on a plugin's worker
// thread (never the training thread). One HttpClient owns one curl easy handle
// and reuses its connections; it is not thread-safe: use one per thread.
//
//   HttpClient http(HttpClientOptions().bearer_token(tok).timeout(std::chrono::seconds(30)));
//   HttpResponse r = http.perform(HttpRequest::post_json(url, body));
//
// Transport failures never throw: they come back as status 0 with `error` set,
// so retry logic (retry.hpp) can classify them with HTTP statuses alike.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::support {

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PUT, DELETE, PATCH, HEAD
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // added to the client's own
  std::string body;                                          // sent when body_file is empty
  std::filesystem::path body_file;                           // when set: streamed from disk, never read whole
  // With body_file: send only the bytes [body_offset, body_offset + body_length)
  // (e.g. one part of an S3 multipart upload); no length = to the end of the file.
  uint64_t body_offset = 0;
  std::optional<uint64_t> body_length;
  // When set: a 2xx response body is streamed into this file (created or
  // truncated) instead of HttpResponse::body; other answers still go to body.
  std::filesystem::path response_file;
  // 0 = the client's default.
  std::chrono::milliseconds timeout{0};

  static HttpRequest get(std::string url);
  static HttpRequest post_json(std::string url, std::string json);
  // PUT of a file's bytes, streamed; content type application/octet-stream.
  static HttpRequest put_file(std::string url, std::filesystem::path file);
  HttpRequest& header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

struct HttpResponse {
  long status = 0;                             // HTTP status; 0 when the transport failed
  std::string body;                            // response body (whole; responses are small JSON)
  std::string error;                           // libcurl's message when status == 0
  int curl_code = 0;                           // CURLcode when status == 0
  bool aborted = false;                        // stopped through HttpClientOptions::abort_flag
  std::map<std::string, std::string> headers;  // names lower-cased; last value wins

  bool ok() const noexcept { return status >= 200 && status < 300; }
  // True when the request may have reached the server and been acted upon
  // although we got no success answer (timeouts, dropped connections, 5xx):
  // the caller must assume a retry could duplicate the effect. False for
  // failures that prove nothing was sent (connection refused, DNS failure).
  bool ambiguous() const noexcept;
  std::optional<std::string> header(std::string_view lower_name) const;
  // "HTTP 404: <body excerpt>" or "connection failed: <curl message>".
  std::string describe() const;
};

class HttpClientOptions {
 public:
  HttpClientOptions& timeout(std::chrono::milliseconds v) {
    timeout_ = v;
    return *this;
  }
  HttpClientOptions& connect_timeout(std::chrono::milliseconds v) {
    connect_timeout_ = v;
    return *this;
  }
  HttpClientOptions& bearer_token(std::string v) {
    bearer_ = std::move(v);
    return *this;
  }
  HttpClientOptions& basic_auth(std::string user, std::string password) {
    user_ = std::move(user);
    password_ = std::move(password);
    return *this;
  }
  HttpClientOptions& insecure_tls(bool v) {
    insecure_tls_ = v;
    return *this;
  }
  // A PEM bundle of the certificate authorities to trust instead of the
  // system's (a site's own CA); empty = the system's.
  HttpClientOptions& ca_bundle(std::string path) {
    ca_bundle_ = std::move(path);
    return *this;
  }
  // A PEM client certificate for mutual TLS; its private key in the same file
  // (as Python's requests takes `cert=`). Empty = none.
  HttpClientOptions& client_cert(std::string path) {
    client_cert_ = std::move(path);
    return *this;
  }
  // Sign every request with AWS Signature V4 (libcurl's CURLOPT_AWS_SIGV4,
  // e.g. "aws:amz:us-east-1:s3") using basic_auth(access key id, secret) as the
  // credentials instead of sending them. libcurl 7.88 does not add
  // x-amz-content-sha256 or x-amz-security-token: callers add those headers.
  HttpClientOptions& aws_sigv4(std::string provider) {
    aws_sigv4_ = std::move(provider);
    return *this;
  }
  HttpClientOptions& user_agent(std::string v) {
    user_agent_ = std::move(v);
    return *this;
  }
  HttpClientOptions& header(std::string name, std::string value) {
    headers_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  // When the pointed-to flag becomes true, a transfer in progress stops within
  // about a second and returns with aborted = true. The flag must outlive the client.
  HttpClientOptions& abort_flag(const std::atomic<bool>* v) {
    abort_ = v;
    return *this;
  }

  std::chrono::milliseconds timeout_{std::chrono::seconds(30)};
  std::chrono::milliseconds connect_timeout_{std::chrono::seconds(10)};
  std::string bearer_;
  std::optional<std::string> user_;
  std::string password_;
  bool insecure_tls_ = false;
  std::string ca_bundle_;
  std::string client_cert_;
  std::string aws_sigv4_;  // empty = no SigV4 signing
  std::string user_agent_ = "trainhook";
  std::vector<std::pair<std::string, std::string>> headers_;
  const std::atomic<bool>* abort_ = nullptr;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Performs one request, no retries. Never throws for network or HTTP errors;
  // throws std::runtime_error only when body_file cannot be opened.
  HttpResponse perform(const HttpRequest& request);

  const HttpClientOptions& options() const noexcept { return options_; }

 private:
  struct Impl;
  HttpClientOptions options_;
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes everything but unreserved characters (RFC 3986), for query
// values. keep_slash leaves '/' alone (for URL paths).
std::string url_encode(std::string_view text, bool keep_slash = false);

}  // namespace trainhook::support
