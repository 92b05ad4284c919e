#include <trainhook/flyte/local_folder_store.hpp>
#include <trainhook/flyte/s3_store.hpp>
#include <trainhook/flyte/s3_xml.hpp>
#include <trainhook/support/sha256.hpp>

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>

namespace trainhook::flyte {
namespace fs = std::filesystem;
using support::HttpRequest;
using support::HttpResponse;
using support::sha256_hex;

namespace {
const std::string kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char* kUnsignedPayload = "UNSIGNED-PAYLOAD";
}  // namespace

S3Store::S3Store(S3Config config, std::string bucket, std::string prefix, const Cancellation* cancel)
    : config_(std::move(config)), bucket_(std::move(bucket)), prefix_(std::move(prefix)), cancel_(cancel) {
  request_retry_.initial_delay(std::chrono::milliseconds(500))
      .max_delay(std::chrono::seconds(8))
      .max_attempts(5);
  support::HttpClientOptions opts;
  opts.aws_sigv4("aws:amz:" + config_.region + ":s3")
      .basic_auth(config_.access_key_id, config_.secret_access_key)
      .timeout(std::chrono::seconds(60))
      .ca_bundle(config_.ca_bundle)
      .user_agent("trainhook-flyte");
  if (cancel_ != nullptr) opts.abort_flag(cancel_->flag());
  http_ = std::make_unique<support::HttpClient>(std::move(opts));
}

std::string S3Store::describe() const { return "s3://" + bucket_ + (prefix_.empty() ? "" : "/" + prefix_); }

std::string S3Store::full_key(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "/" + key;
}

std::string S3Store::object_url(const std::string& key) const {
  return config_.endpoint + "/" + support::url_encode(bucket_) + "/" +
         support::url_encode(full_key(key), true);
}

void S3Store::sign_headers(HttpRequest& req, const std::string& payload_sha256) const {
  // libcurl 7.88 signs but adds neither header; S3 requires the first and, for
  // temporary credentials, the second (both are then covered by the signature).
  req.header("x-amz-content-sha256", payload_sha256);
  if (!config_.session_token.empty()) req.header("x-amz-security-token", config_.session_token);
}

HttpResponse S3Store::send(HttpRequest req, const std::string& what) {
  support::Sleeper sleeper = [this](std::chrono::milliseconds d) {
    return cancel_ == nullptr ? (std::this_thread::sleep_for(d), true) : !cancel_->wait_for(d);
  };
  support::RetryResult r;
  try {
    r = support::send_with_retry(*http_, std::move(req), request_retry_,
                                 support::RetryClassification::standard(), sleeper);
  } catch (const std::exception& e) {  // a local file that cannot be opened
    throw StoreError(what + ": " + e.what(), false);
  }
  if (r.decision == support::RetryDecision::success) return r.response;
  std::string detail = r.response.describe();
  if (auto err = s3xml::error_of(r.response.body))
    detail = "HTTP " + std::to_string(r.response.status) + " " + *err;
  const bool retryable = r.decision == support::RetryDecision::retry && !r.interrupted;
  throw StoreError(what + " failed after " + std::to_string(r.attempts) + " attempt(s): " + detail,
                   retryable);
}

std::vector<ObjectInfo> S3Store::list(const std::string& key_prefix) {
  const std::string root = prefix_.empty() ? "" : prefix_ + "/";
  std::vector<ObjectInfo> out;
  std::string token;
  for (;;) {
    // Canonical order (sorted names, encoded values): libcurl signs the query as written.
    std::string query;
    if (!token.empty()) query += "continuation-token=" + support::url_encode(token) + "&";
    query += "list-type=2&prefix=" + support::url_encode(root + key_prefix);
    HttpRequest req = HttpRequest::get(config_.endpoint + "/" + support::url_encode(bucket_) + "?" + query);
    sign_headers(req, kEmptySha256);
    const HttpResponse r = send(std::move(req), "listing " + describe());
    if (auto err = s3xml::error_of(r.body)) throw StoreError("listing " + describe() + ": " + *err, true);
    for (auto block : s3xml::blocks(r.body, "Contents")) {
      const auto key = s3xml::first(block, "Key");
      const auto size = s3xml::first(block, "Size");
      if (!key || !size || key->compare(0, root.size(), root) != 0) continue;
      uint64_t bytes = 0;
      try {
        bytes = std::stoull(*size);
      } catch (const std::exception&) {
        throw StoreError("listing " + describe() + ": object '" + *key + "' has a bad <Size> '" + *size + "'",
                         false);
      }
      out.push_back({key->substr(root.size()), bytes});
    }
    const auto truncated = s3xml::first(r.body, "IsTruncated");
    const auto next = s3xml::first(r.body, "NextContinuationToken");
    if (truncated != std::string("true") || !next || next->empty()) break;
    token = *next;
  }
  return out;
}

void S3Store::put_file(const fs::path& file, const std::string& key) {
  std::error_code ec;
  const uint64_t size = fs::file_size(file, ec);
  if (ec) throw StoreError("upload of '" + file.string() + "': " + ec.message(), false);
  if (size > config_.multipart_threshold) return put_multipart(file, size, key);
  HttpRequest req = HttpRequest::put_file(object_url(key), file);
  req.timeout = std::chrono::minutes(15);
  sign_headers(req, kUnsignedPayload);
  send(std::move(req), "PUT " + describe() + "/" + key);
}

void S3Store::put_multipart(const fs::path& file, uint64_t size, const std::string& key) {
  const std::string what = "multipart upload of " + describe() + "/" + key;
  const std::string url = object_url(key);
  HttpRequest start;
  start.method = "POST";
  start.url = url + "?uploads=";
  sign_headers(start, kEmptySha256);
  const HttpResponse started = send(std::move(start), what + " (start)");
  const auto upload_id = s3xml::first(started.body, "UploadId");
  if (!upload_id || upload_id->empty())
    throw StoreError(what + ": no UploadId in the answer: " + started.describe(), true);
  const std::string id_query = "uploadId=" + support::url_encode(*upload_id);

  auto abort_upload = [&] {
    HttpRequest del;
    del.method = "DELETE";
    del.url = url + "?" + id_query;
    sign_headers(del, kEmptySha256);
    try {
      http_->perform(
          del);  // best effort: an abandoned upload only costs storage until lifecycle rules clean it
    } catch (...) {
    }
  };

  try {
    const uint64_t part_size = std::max(config_.part_size, kMinPartSize);
    std::vector<std::pair<int, std::string>> parts;
    int number = 1;
    for (uint64_t offset = 0; offset < size; offset += part_size, ++number) {
      HttpRequest part =
          HttpRequest::put_file(url + "?partNumber=" + std::to_string(number) + "&" + id_query, file);
      part.body_offset = offset;
      part.body_length = std::min(part_size, size - offset);
      part.timeout = std::chrono::minutes(15);
      sign_headers(part, kUnsignedPayload);
      const HttpResponse r = send(std::move(part), what + " (part " + std::to_string(number) + ")");
      const auto etag = r.header("etag");
      if (!etag || etag->empty())
        throw StoreError(what + ": part " + std::to_string(number) + " answered without an ETag", true);
      parts.emplace_back(number, *etag);  // kept with its quotes, as S3 expects it back
    }
    const std::string body = s3xml::complete_multipart_body(parts);
    HttpRequest done;
    done.method = "POST";
    done.url = url + "?" + id_query;
    done.body = body;
    done.header("Content-Type", "application/xml");
    sign_headers(done, sha256_hex(body));
    const HttpResponse r = send(std::move(done), what + " (complete)");
    // S3 may answer 200 and still fail, with an <Error> document as the body.
    if (auto err = s3xml::error_of(r.body)) throw StoreError(what + " (complete): " + *err, true);
  } catch (...) {
    abort_upload();
    throw;
  }
}

void S3Store::get_file(const std::string& key, const fs::path& file) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  fs::path tmp = file;
  tmp += "." + std::to_string(counter.fetch_add(1)) + kTempSuffix;
  HttpRequest req = HttpRequest::get(object_url(key));
  req.response_file = tmp;
  req.timeout = std::chrono::minutes(15);
  sign_headers(req, kEmptySha256);
  try {
    send(std::move(req), "GET " + describe() + "/" + key);
  } catch (...) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw StoreError("download of " + key + ": cannot move into '" + file.string() + "': " + ec.message(),
                     true);
  }
}

}  // namespace trainhook::flyte
