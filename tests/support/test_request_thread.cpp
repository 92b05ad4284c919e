#include <doctest/doctest.h>
#include <trainhook/support/request_thread.hpp>

#include "test_http_server.hpp"

#include <atomic>
#include <chrono>
#include <thread>

using namespace trainhook::support;
using namespace std::chrono_literals;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;

TEST_CASE(
    "perform returns the response and calls while_waiting on the caller's thread during a slow request") {
  TestHttpServer server([](const TestRequest& r) {
    TestReply reply;
    reply.body = r.method + " " + r.target;
    reply.delay = 200ms;
    return reply;
  });
  HttpClient http;
  RequestThread thread;
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  bool on_caller = true;
  const HttpRequest request = HttpRequest::get(server.url() + "/slow");
  HttpResponse r = thread.perform(http, request, [&] {
    ++calls;
    on_caller = on_caller && std::this_thread::get_id() == caller;
  });
  CHECK(r.ok());
  CHECK(r.body == "GET /slow");
  CHECK(calls >= 2);  // a 200 ms request polled every 50 ms
  CHECK(on_caller);
}

TEST_CASE("the same thread serves request after request, each answer to its own request") {
  TestHttpServer server([](const TestRequest& r) {
    TestReply reply;
    reply.body = r.target;
    return reply;
  });
  HttpClient http;
  RequestThread thread;
  for (int i = 0; i < 20; ++i) {
    const HttpRequest request = HttpRequest::get(server.url() + "/n" + std::to_string(i));
    HttpResponse r = thread.perform(http, request, {});
    CHECK(r.body == "/n" + std::to_string(i));
  }
  CHECK(server.requests().size() == 20);
}

TEST_CASE("a transport failure comes back as a response, and the abort flag ends a request in flight") {
  HttpClient refused;
  RequestThread thread;
  // Port 9 (discard) on 127.0.0.1: nothing listens there in the test environment.
  HttpResponse r = thread.perform(refused, HttpRequest::get("http://127.0.0.1:9/"), {});
  CHECK(r.status == 0);
  CHECK_FALSE(r.error.empty());

  TestHttpServer server([](const TestRequest&) {
    TestReply reply;
    reply.delay = 5000ms;
    return reply;
  });
  std::atomic<bool> abort{false};
  HttpClient http(HttpClientOptions().abort_flag(&abort));
  const auto start = std::chrono::steady_clock::now();
  const HttpRequest request = HttpRequest::get(server.url() + "/hang");
  HttpResponse a = thread.perform(http, request, [&] {
    if (std::chrono::steady_clock::now() - start > 100ms) abort = true;
  });
  CHECK(a.aborted);
  CHECK(std::chrono::steady_clock::now() - start < 4000ms);
}
