// S3Store against an in-process HTTP listener: the SigV4 Authorization header
// libcurl sends is recomputed independently (sigv4_check), and the request
// sequences (listing, PUT, multipart, 200-with-<Error>, retries) are checked.
#include "sigv4_check.hpp"
#include "test_files.hpp"
#include "test_http_server.hpp"  // tests/support: the shared scripted HTTP server

#include <trainhook/flyte/s3_store.hpp>
#include <trainhook/support/sha256.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>

using namespace trainhook::flyte;
using trainhook::support::sha256_hex;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;
namespace fs = std::filesystem;

namespace {

std::string path_of(const TestRequest& r) { return r.target.substr(0, r.target.find('?')); }
std::string query_of(const TestRequest& r) {
  const auto q = r.target.find('?');
  return q == std::string::npos ? "" : r.target.substr(q + 1);
}
TestReply reply(int status, std::vector<std::pair<std::string, std::string>> headers, std::string body) {
  TestReply out;
  out.status = status;
  out.headers = std::move(headers);
  out.body = std::move(body);
  return out;
}

const char* kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

S3Config config_for(const TestHttpServer& server, std::string token = "") {
  S3Config c;
  c.endpoint = server.url();
  c.region = "eu-west-3";
  c.access_key_id = "AKIDEXAMPLE123";
  c.secret_access_key = kSecret;
  c.session_token = std::move(token);
  c.multipart_threshold = 5ull << 20;
  c.part_size = 5ull << 20;
  return c;
}

void fast_retries(S3Store& s) {
  s.set_request_retry(trainhook::support::RetryPolicy()
                          .initial_delay(std::chrono::milliseconds(5))
                          .max_delay(std::chrono::milliseconds(20))
                          .max_attempts(3));
}

// `size` bytes of a fixed pattern in a new file `p`.
fs::path write_patterned(const fs::path& p, size_t size) {
  std::ofstream out(p, std::ios::binary);
  for (size_t i = 0; i < size; ++i) out.put(static_cast<char>((i * 7919) >> 3));
  return p;
}

// Checks one captured request's Authorization header by recomputing it.
void check_signature(const TestRequest& r) {
  INFO(r.method << " " << r.target);
  REQUIRE(r.headers.count("authorization"));
  const std::string auth = r.headers.at("authorization");
  std::smatch m;
  REQUIRE(std::regex_match(auth, m,
                           std::regex("AWS4-HMAC-SHA256 Credential=([^/]+)/(\\d{8})/([^/]+)/s3/aws4_request, "
                                      "SignedHeaders=([^,]+), Signature=([0-9a-f]{64})")));
  CHECK(m[1] == "AKIDEXAMPLE123");
  CHECK(m[3] == "eu-west-3");
  const std::string signed_headers = m[4];
  CHECK(signed_headers.find("host") != std::string::npos);
  CHECK(signed_headers.find("x-amz-date") != std::string::npos);
  CHECK(signed_headers.find("x-amz-content-sha256") != std::string::npos);
  REQUIRE(r.headers.count("x-amz-content-sha256"));
  sigv4_check::Request req{r.method, path_of(r), query_of(r), r.headers};
  CHECK(sigv4_check::canonical_query(query_of(r)) == query_of(r));  // we send queries already canonical
  CHECK(sigv4_check::signature(req, signed_headers, kSecret, m[2], "eu-west-3", "s3") == std::string(m[5]));
  for (const auto& [name, value] : r.headers) CHECK(value.find(kSecret) == std::string::npos);
}

}  // namespace

TEST_CASE("s3 store: a PUT is signed with SigV4 over x-amz-content-sha256 and the session token") {
  TestHttpServer server([](const TestRequest&) { return reply(200, {{"ETag", "\"abc\""}}, ""); });
  S3Store store(config_for(server, "SESSIONTOKEN/xyz=="), "my-bucket", "runs/attempt 1");
  const flyte_test::TempDir tmp("th_flyte_put");
  const auto file = write_patterned(tmp.path / "put.bin", 1000);
  store.put_file(file, "checkpoint-5/model.pt");
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].method == "PUT");
  CHECK(reqs[0].target == "/my-bucket/runs/attempt%201/checkpoint-5/model.pt");  // path-style
  CHECK(reqs[0].body == flyte_test::read_file(file));
  CHECK(reqs[0].headers.at("x-amz-security-token") == "SESSIONTOKEN/xyz==");
  CHECK(reqs[0].headers.at("authorization").find("x-amz-security-token") != std::string::npos);
  check_signature(reqs[0]);
}

TEST_CASE("s3 store: listing follows continuation tokens and strips the prefix") {
  TestHttpServer server([](const TestRequest& r) {
    if (query_of(r).find("continuation-token=") == std::string::npos)
      return reply(200, {},
                   "<ListBucketResult><IsTruncated>true</IsTruncated>"
                   "<Contents><Key>p/checkpoint-1/a&amp;b.bin</Key><Size>3</Size></Contents>"
                   "<NextContinuationToken>tok/1+=</NextContinuationToken></ListBucketResult>");
    return reply(200, {},
                 "<ListBucketResult><IsTruncated>false</IsTruncated>"
                 "<Contents><Key>p/checkpoint-2/x</Key><Size>12</Size></Contents>"
                 "</ListBucketResult>");
  });
  S3Store store(config_for(server), "b", "p");
  const auto objects = store.list("");
  REQUIRE(objects.size() == 2);
  CHECK(objects[0].key == "checkpoint-1/a&b.bin");
  CHECK(objects[0].size == 3);
  CHECK(objects[1].key == "checkpoint-2/x");
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].target == "/b?list-type=2&prefix=p%2F");
  CHECK(reqs[1].target == "/b?continuation-token=tok%2F1%2B%3D&list-type=2&prefix=p%2F");
  for (const auto& r : reqs) check_signature(r);
}

TEST_CASE("s3 store: a large file goes as a multipart upload streamed in >= 5 MiB parts") {
  int part_no = 0;
  TestHttpServer server([&](const TestRequest& r) {
    if (r.method == "POST" && query_of(r) == "uploads=")
      return reply(200, {},
                   "<InitiateMultipartUploadResult><UploadId>up/1+x</UploadId>"
                   "</InitiateMultipartUploadResult>");
    if (r.method == "PUT") return reply(200, {{"ETag", "\"etag" + std::to_string(++part_no) + "\""}}, "");
    return reply(200, {},
                 "<CompleteMultipartUploadResult><ETag>\"x-3\"</ETag></CompleteMultipartUploadResult>");
  });
  S3Store store(config_for(server), "b", "");
  const size_t size = (12u << 20) + 123;
  const flyte_test::TempDir tmp("th_flyte_multipart");
  const auto file = write_patterned(tmp.path / "multipart.bin", size);
  store.put_file(file, "big.bin");
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 5);
  CHECK(reqs[0].target == "/b/big.bin?uploads=");
  std::string joined;
  for (int i = 1; i <= 3; ++i) {
    CHECK(reqs[i].method == "PUT");
    CHECK(reqs[i].target == "/b/big.bin?partNumber=" + std::to_string(i) + "&uploadId=up%2F1%2Bx");
    joined += reqs[i].body;
  }
  CHECK(reqs[1].body.size() == (5u << 20));
  CHECK(reqs[3].body.size() == size - (10u << 20));
  CHECK(joined == flyte_test::read_file(file));
  CHECK(reqs[4].method == "POST");
  CHECK(reqs[4].target == "/b/big.bin?uploadId=up%2F1%2Bx");
  CHECK(reqs[4].body.find("<Part><PartNumber>2</PartNumber><ETag>&quot;etag2&quot;</ETag></Part>") !=
        std::string::npos);
  CHECK(reqs[4].headers.at("x-amz-content-sha256") == sha256_hex(reqs[4].body));
  for (const auto& r : reqs) check_signature(r);
}

TEST_CASE("s3 store: a 200 answer carrying <Error> fails the multipart upload, which is aborted") {
  TestHttpServer server([](const TestRequest& r) {
    if (r.method == "POST" && query_of(r) == "uploads=")
      return reply(200, {},
                   "<InitiateMultipartUploadResult><UploadId>U</UploadId></InitiateMultipartUploadResult>");
    if (r.method == "PUT") return reply(200, {{"ETag", "\"e\""}}, "");
    if (r.method == "DELETE") return reply(204, {}, "");
    return reply(200, {}, "<Error><Code>InternalError</Code><Message>try again</Message></Error>");
  });
  S3Store store(config_for(server), "b", "");
  fast_retries(store);
  const flyte_test::TempDir tmp("th_flyte_multipart_err");
  const auto file = write_patterned(tmp.path / "multipart_err.bin", (5u << 20) + 1);
  try {
    store.put_file(file, "k");
    FAIL("expected a StoreError");
  } catch (const StoreError& e) {
    CHECK(e.retryable());
    CHECK(std::string(e.what()).find("InternalError: try again") != std::string::npos);
  }
  const auto reqs = server.requests();
  REQUIRE(!reqs.empty());
  CHECK(reqs.back().method == "DELETE");
  CHECK(reqs.back().target == "/b/k?uploadId=U");
}

TEST_CASE("s3 store: 503 is retried, 403 fails at once, not retryable, without the secret in the message") {
  int calls = 0;
  TestHttpServer server([&](const TestRequest& r) {
    ++calls;
    if (r.target.find("denied") != std::string::npos)
      return reply(403, {}, "<Error><Code>AccessDenied</Code><Message>no</Message></Error>");
    if (calls == 1) return reply(503, {}, "<Error><Code>SlowDown</Code></Error>");
    return reply(200, {}, "hello");
  });
  S3Store store(config_for(server), "b", "pre");
  fast_retries(store);
  const flyte_test::TempDir tmp("th_flyte_get");
  const fs::path out = tmp.path / "sub" / "file.txt";
  store.get_file("ok.txt", out);
  CHECK(calls == 2);
  CHECK(flyte_test::read_file(out) == "hello");
  try {
    store.get_file("denied.txt", out);
    FAIL("expected a StoreError");
  } catch (const StoreError& e) {
    CHECK_FALSE(e.retryable());
    CHECK(std::string(e.what()).find("AccessDenied") != std::string::npos);
    CHECK(std::string(e.what()).find(kSecret) == std::string::npos);
  }
  CHECK(calls == 3);
  CHECK(flyte_test::read_file(out) == "hello");  // a failed download leaves the previous file alone
}
