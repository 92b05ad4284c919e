// file_stream bodies, W&B's retry classification, and FileStreamer against a
// scripted in-process HTTP server: offsets, coalescing, size bound, retries,
// Retry-After, final refusals, complete/exitcode, auth header.
#include <http_logger/file_stream.hpp>

#include <test_http_server.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <deque>

using namespace trainhook::wandb;
using nlohmann::json;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;

namespace {
trainhook::support::HttpResponse answer(long status) {
  trainhook::support::HttpResponse r;
  r.status = status;
  return r;
}
StreamOptions fast() {
  StreamOptions o;
  o.policy = trainhook::support::RetryPolicy()
                 .initial_delay(std::chrono::milliseconds(100))
                 .max_delay(std::chrono::milliseconds(400));
  return o;
}
}  // namespace

TEST_CASE("file_stream body: offsets, content as strings, complete only when asked") {
  std::deque<std::string> lines = {R"({"a":1})", R"({"a":2})", R"({"a":3})"};
  std::string summary = R"({"a":2})";
  json b = json::parse(file_stream_body(5, lines, 2, &summary, 0, std::nullopt));
  CHECK(b["files"]["wandb-history.jsonl"]["offset"] == 5);
  CHECK(b["files"]["wandb-history.jsonl"]["content"] == json::array({R"({"a":1})", R"({"a":2})"}));
  CHECK(b["files"]["wandb-summary.json"] == json::parse(R"({"offset":0,"content":["{\"a\":2}"]})"));
  CHECK_FALSE(b.contains("complete"));
  json e = json::parse(file_stream_body(0, lines, 0, nullptr, 0, 1));
  CHECK(e == json::parse(R"({"files":{},"complete":true,"exitcode":1})"));
  CHECK((StreamTarget{"http://h", "e n", "p", "r"}.url() == "http://h/files/e%20n/p/r/file_stream"));
}

TEST_CASE("W&B's retry rules") {
  using trainhook::support::RetryDecision;
  for (long s : {400L, 401L, 403L, 404L, 409L, 410L, 413L, 422L, 501L})
    CHECK(classify(answer(s)) == RetryDecision::fail);
  for (long s : {0L, 408L, 429L, 500L, 502L, 503L, 418L}) CHECK(classify(answer(s)) == RetryDecision::retry);
  CHECK(classify(answer(200)) == RetryDecision::success);
  CHECK(reply_says_stopped(R"({"stopped":true})"));
  CHECK_FALSE(reply_says_stopped(R"({"exitcode":null})"));
}

TEST_CASE("FileStreamer: retries keep offsets, coalesce new lines, honour Retry-After, then complete") {
  int n = 0;
  TestHttpServer server([&](const TestRequest&) {
    ++n;
    TestReply r;
    if (n == 1) r.status = 500;
    if (n == 2) {
      r.status = 429;
      r.headers.emplace_back("Retry-After", "3");
    }
    if (n == 3) r.drop = true;
    if (r.status == 200 && !r.drop) r.body = n == 5 ? R"({"stopped":true})" : "{}";
    return r;
  });
  trainhook::support::HttpClient http(trainhook::support::HttpClientOptions().basic_auth("api", "secret"));
  FileStreamer fs(StreamTarget{server.url(), "e", "p", "r"}, 10, fast());
  fs.add_line(R"({"_step":0})");
  fs.set_summary(R"({"s":1})");
  SendResult r = fs.send_once(http);
  CHECK(r.status == SendStatus::retry);
  CHECK(r.retry_in <= std::chrono::milliseconds(125));
  fs.add_line(R"({"_step":1})");  // arrives while backing off: goes into the same retry
  r = fs.send_once(http);
  CHECK(r.status == SendStatus::retry);
  CHECK(r.retry_in == std::chrono::milliseconds(3000));  // Retry-After wins over the backoff
  r = fs.send_once(http);
  CHECK(r.status == SendStatus::retry);
  r = fs.send_once(http);
  CHECK(r.status == SendStatus::delivered);
  CHECK(r.lines == 2);
  CHECK(fs.acked_offset() == 12);
  CHECK_FALSE(fs.has_work());
  fs.set_complete(0);
  r = fs.send_once(http);
  CHECK(r.status == SendStatus::delivered);
  CHECK(r.stopped);
  CHECK(fs.complete_acked());

  auto reqs = server.requests();
  REQUIRE(reqs.size() == 5);
  for (size_t i = 0; i < 4; ++i) {
    json b = json::parse(reqs[i].body);
    CHECK(b["files"]["wandb-history.jsonl"]["offset"] == 10);  // every retry starts at the same offset
    CHECK(reqs[i].target == "/files/e/p/r/file_stream");
    CHECK(reqs[i].headers["authorization"] == "Basic YXBpOnNlY3JldA==");  // base64("api:secret")
  }
  CHECK(json::parse(reqs[0].body)["files"]["wandb-history.jsonl"]["content"].size() == 1);
  CHECK(json::parse(reqs[3].body)["files"]["wandb-history.jsonl"]["content"].size() == 2);
  json last = json::parse(reqs[4].body);
  CHECK(last == json::parse(R"({"files":{},"complete":true,"exitcode":0})"));
}

TEST_CASE("FileStreamer: a final refusal is not retried and the size bound splits requests") {
  TestHttpServer refuse([](const TestRequest&) {
    TestReply r;
    r.status = 403;
    r.body = "{\"error\":\"no access to project p\"}";
    return r;
  });
  trainhook::support::HttpClient http;
  FileStreamer fs(StreamTarget{refuse.url(), "e", "p", "r"}, 0, fast());
  fs.add_line("{}");
  SendResult r = fs.send_once(http);
  CHECK(r.status == SendStatus::fatal);
  CHECK(r.message.find("no access to project p") != std::string::npos);
  CHECK(fs.pending().size() == 1);

  TestHttpServer ok([](const TestRequest&) {
    TestReply reply;
    reply.body = "{}";
    return reply;
  });
  StreamOptions small = fast();
  small.max_request_bytes = 40;
  FileStreamer split(StreamTarget{ok.url(), "e", "p", "r"}, 0, small);
  for (int i = 0; i < 5; ++i) split.add_line(R"({"_step":)" + std::to_string(i) + "}");
  split.set_complete(0);
  int requests = 0;
  while (split.has_work() && requests < 20) {
    CHECK(split.send_once(http).status == SendStatus::delivered);
    ++requests;
  }
  CHECK(requests == 3);
  auto reqs = ok.requests();
  int64_t expect = 0;
  for (const auto& q : reqs) {
    json b = json::parse(q.body);
    CHECK(b["files"]["wandb-history.jsonl"]["offset"] == expect);
    expect += static_cast<int64_t>(b["files"]["wandb-history.jsonl"]["content"].size());
    CHECK(b.contains("complete") == (expect == 5));
  }
  CHECK(expect == 5);
}
