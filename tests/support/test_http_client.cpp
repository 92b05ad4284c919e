#include <doctest/doctest.h>
#include <trainhook/support/http_client.hpp>

#include "test_http_server.hpp"

#include <temp_dir.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace trainhook::support;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;

TEST_CASE("GET and POST reach the server with auth and custom headers") {
  TestHttpServer server([](const TestRequest& r) {
    TestReply reply;
    reply.body = r.method + " " + r.target;
    reply.headers.emplace_back("X-Echo", "yes");
    return reply;
  });
  HttpClient http(HttpClientOptions().bearer_token("tok123").header("X-Team", "ml"));
  HttpResponse g = http.perform(HttpRequest::get(server.url() + "/a?b=1"));
  CHECK(g.ok());
  CHECK(g.body == "GET /a?b=1");
  CHECK(g.header("x-echo").value() == "yes");
  HttpResponse p = http.perform(HttpRequest::post_json(server.url() + "/post", R"({"k":1})"));
  CHECK(p.status == 200);
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].headers.at("authorization") == "Bearer tok123");
  CHECK(reqs[0].headers.at("x-team") == "ml");
  CHECK(reqs[1].method == "POST");
  CHECK(reqs[1].body == R"({"k":1})");
  CHECK(reqs[1].headers.at("content-type") == "application/json");
}

TEST_CASE("basic auth takes precedence over a token") {
  TestHttpServer server([](const TestRequest&) { return TestReply{}; });
  HttpClient http(HttpClientOptions().bearer_token("tok").basic_auth("alice", "s3cret"));
  CHECK(http.perform(HttpRequest::get(server.url() + "/")).ok());
  // base64("alice:s3cret")
  CHECK(server.requests().at(0).headers.at("authorization") == "Basic YWxpY2U6czNjcmV0");
}

TEST_CASE("PUT streams a file body") {
  namespace fs = std::filesystem;
  const trainhook::testkit::TempDir tmp("th_support_put");
  const fs::path file = tmp.path / "body.bin";
  std::string content;
  for (int i = 0; i < 200000; ++i) content.push_back(static_cast<char>('a' + i % 26));
  std::ofstream(file, std::ios::binary) << content;
  TestHttpServer server([](const TestRequest&) { return TestReply{}; });
  HttpClient http;
  HttpResponse r = http.perform(HttpRequest::put_file(server.url() + "/up/x.bin", file));
  CHECK(r.ok());
  auto req = server.requests().at(0);
  CHECK(req.method == "PUT");
  CHECK(req.target == "/up/x.bin");
  CHECK(req.body == content);
  fs::remove(file);
  CHECK_THROWS_WITH(http.perform(HttpRequest::put_file(server.url() + "/", file)),
                    doctest::Contains(file.string().c_str()));
}

TEST_CASE("HTTP errors and transport failures are answers and not exceptions") {
  TestHttpServer server([](const TestRequest& r) {
    TestReply reply;
    reply.status = r.target == "/missing" ? 404 : 503;
    reply.body = R"({"error_code":"X","message":"nope"})";
    if (r.target == "/drop") reply.drop = true;
    return reply;
  });
  HttpClient http;
  HttpResponse nf = http.perform(HttpRequest::get(server.url() + "/missing"));
  CHECK(nf.status == 404);
  CHECK_FALSE(nf.ambiguous());
  CHECK(nf.describe().find("HTTP 404") == 0);
  CHECK(nf.describe().find("nope") != std::string::npos);
  HttpResponse busy = http.perform(HttpRequest::get(server.url() + "/busy"));
  CHECK(busy.status == 503);
  CHECK(busy.ambiguous());
  HttpResponse dropped = http.perform(HttpRequest::post_json(server.url() + "/drop", "{}"));
  CHECK(dropped.status == 0);
  CHECK(dropped.ambiguous());  // the server got the request: it may have acted on it

  int port = server.port();
  {
    TestHttpServer other([](const TestRequest&) { return TestReply{}; });
    port = other.port();
  }  // closed: nothing listens there now
  HttpResponse refused = http.perform(HttpRequest::get("http://127.0.0.1:" + std::to_string(port) + "/"));
  CHECK(refused.status == 0);
  CHECK_FALSE(refused.ambiguous());
  CHECK(refused.describe().find("connection failed") == 0);
}

TEST_CASE("the abort flag stops a transfer in progress") {
  TestHttpServer server([](const TestRequest&) {
    TestReply r;
    r.delay = std::chrono::milliseconds(3000);
    return r;
  });
  std::atomic<bool> abort{false};
  HttpClient http(HttpClientOptions().abort_flag(&abort));
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    abort = true;
  });
  HttpResponse r = http.perform(HttpRequest::get(server.url() + "/slow"));
  t.join();
  CHECK(r.status == 0);
  CHECK(r.aborted);
}

TEST_CASE("url_encode") {
  CHECK(url_encode("a b/c?d=é") == "a%20b%2Fc%3Fd%3D%C3%A9");
  CHECK(url_encode("run/ckpt-1/x y", true) == "run/ckpt-1/x%20y");
}
