// file_stream bodies, W&B's retry classification, and FileStreamer against a
// scripted in-process HTTP server: offsets, coalescing, size bound, retries,
// Retry-After, final refusals, complete/exitcode, auth header.
#include <trainhook/wandb/file_stream.hpp>

#include <temp_dir.hpp>
#include <test_http_server.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace trainhook::wandb;
using nlohmann::json;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;
using trainhook::testkit::TempDir;

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
  CHECK(fs.pending_lines() == 1);

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

TEST_CASE(
    "FileStreamer memory bound: old lines spill to disk, every line arrives once, in order, at its offset") {
  // A lagging server: with memory_lines = 4, only a handful of
  // lines stay in memory; the rest wait in the spill file and go first.
  int calls = 0;
  TestHttpServer server([&](const TestRequest&) {
    ++calls;
    TestReply r;
    if (calls == 2 || calls == 5) {  // failures in the middle: the same offsets are resent
      r.status = 503;
      r.body = "{}";
      return r;
    }
    r.body = "{}";
    return r;
  });
  const TempDir tmp("wandb-spill-test");
  const auto& dir = tmp.path;
  StreamOptions o = fast();
  o.memory_lines = 4;
  o.spill_file = dir / "spill.jsonl";
  std::ofstream(o.spill_file) << "{\"stale\":1}\n";  // a leftover of another process: never sent
  trainhook::support::HttpClient http;
  {
    FileStreamer fs(StreamTarget{server.url(), "e", "p", "r"}, 100, o);
    CHECK_FALSE(std::filesystem::exists(o.spill_file));
    for (int i = 0; i < 11; ++i) fs.add_line(R"({"_step":)" + std::to_string(i) + "}");
    // 11 lines: spills happened at the 5th line (3 out) and the 7th (3 more), 5 left... bounded by 4.
    CHECK(fs.in_memory() <= 4);
    CHECK(fs.spilled() == 11 - fs.in_memory());
    CHECK(fs.backlog_full());  // a full request's worth waits: the uploader sends without its interval
    CHECK(std::filesystem::exists(o.spill_file));
    int sent = 0;
    while (fs.has_work() && sent < 40) {
      SendResult r = fs.send_once(http);
      CHECK((r.status == SendStatus::delivered || r.status == SendStatus::retry));
      if (sent == 3) {
        // Lines logged while the backlog drains go behind it.
        for (int i = 11; i < 14; ++i) fs.add_line(R"({"_step":)" + std::to_string(i) + "}");
        fs.set_complete(0);  // the end mark goes with the request that carries the last line
      }
      ++sent;
    }
    CHECK_FALSE(fs.has_work());
    CHECK_FALSE(fs.backlog_full());
    CHECK(fs.acked_offset() == 114);
  }
  CHECK_FALSE(std::filesystem::exists(o.spill_file));  // removed with the streamer
  std::map<int64_t, int> at;                           // offset -> _step stored there (a resend must agree)
  bool completed_last = false;
  size_t max_lines = 0;
  const auto reqs = server.requests();
  for (size_t q = 0; q < reqs.size(); ++q) {
    json b = json::parse(reqs[q].body);
    completed_last = b.contains("complete");
    if (!b["files"].contains("wandb-history.jsonl")) continue;
    const auto& h = b["files"]["wandb-history.jsonl"];
    max_lines = std::max(max_lines, h["content"].size());
    for (size_t i = 0; i < h["content"].size(); ++i) {
      const int step = json::parse(h["content"][i].get<std::string>())["_step"].get<int>();
      const int64_t off = h["offset"].get<int64_t>() + static_cast<int64_t>(i);
      CHECK(at.emplace(off, step).first->second == step);
    }
  }
  CHECK(completed_last);
  CHECK(max_lines <= 4);  // a request carries at most the memory bound
  REQUIRE(at.size() == 14);
  int64_t off = 100;
  for (const auto& [o2, step] : at) {
    CHECK(o2 == off);
    CHECK(step == off - 100);
    ++off;
  }
}

TEST_CASE("FileStreamer memory bound: take_pending hands spilled then in-memory lines over in order") {
  const TempDir tmp("wandb-take-test");
  const auto dir = tmp.path / "spill";  // not made yet: the streamer makes it when it spills
  StreamOptions o = fast();
  o.memory_lines = 3;
  o.spill_file = dir / "spill.jsonl";
  FileStreamer fs(StreamTarget{"http://127.0.0.1:9", "e", "p", "r"}, 7, o);
  for (int i = 0; i < 10; ++i) fs.add_line(std::to_string(i));
  CHECK(fs.spilled() > 0);
  std::vector<std::string> got;
  size_t biggest = 0;
  fs.take_pending([&](const std::vector<std::string>& lines) {
    biggest = std::max(biggest, lines.size());
    got.insert(got.end(), lines.begin(), lines.end());
  });
  CHECK(got == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"});
  CHECK(biggest <= 3);
  CHECK(fs.pending_lines() == 0);
  CHECK(fs.acked_offset() == 17);
  CHECK_THROWS_AS(FileStreamer(StreamTarget{}, 0,
                               [] {
                                 StreamOptions bad;
                                 bad.memory_lines = 2;
                                 return bad;
                               }()),
                  std::invalid_argument);
}

TEST_CASE("FileStreamer while_waiting: lines and a summary added during a request go in the next one") {
  // The uploader takes in queued records while a slow request is in flight
  // (the worker queue must not grow with one request's length).
  std::atomic<int> calls{0};
  std::atomic<bool> release{false};
  TestHttpServer server([&](const TestRequest&) {
    if (++calls == 1)
      while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    TestReply r;
    r.body = "{}";
    return r;
  });
  trainhook::support::HttpClient http;
  StreamOptions o = fast();
  FileStreamer fs(StreamTarget{server.url(), "e", "p", "r"}, 0, o);
  fs.add_line(R"({"_step":0})");
  fs.set_summary(R"({"s":0})");
  int waits = 0;
  SendResult r = fs.send_once(http, [&] {
    ++waits;
    if (waits <= 3) fs.add_line(R"({"_step":)" + std::to_string(waits) + "}");
    if (waits == 3) {
      fs.set_summary(R"({"s":3})");
      release = true;
    }
  });
  CHECK(r.status == SendStatus::delivered);
  CHECK(r.lines == 1);
  CHECK(waits >= 3);
  CHECK(fs.acked_offset() == 1);
  CHECK(fs.summary_dirty());  // set during the request: not what it carried
  r = fs.send_once(http);
  CHECK(r.lines == 3);
  CHECK_FALSE(fs.has_work());
  const auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  json a = json::parse(reqs[0].body), b = json::parse(reqs[1].body);
  CHECK(a["files"]["wandb-history.jsonl"]["content"].size() == 1);
  CHECK(a["files"]["wandb-summary.json"]["content"][0] == R"({"s":0})");
  CHECK(b["files"]["wandb-history.jsonl"]["offset"] == 1);
  CHECK(b["files"]["wandb-history.jsonl"]["content"].size() == 3);
  CHECK(b["files"]["wandb-summary.json"]["content"][0] == R"({"s":3})");
}
