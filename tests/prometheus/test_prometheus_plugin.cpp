// The built prometheus plugin through the C ABI (testkit's fake host): the
// exporter's lifetime over a run, the final push of a finished and of a failed
// (EXCEPTION) run, push failures reported with the URL and the HTTP status,
// a taken port failing train begin, and no exporter on other ranks. Pushes go
// to the scripted test server (the real Pushgateway is in run_prometheus_test.py).
// Push requests coalesce while one is in flight, so the tests wait for the
// train-begin push to arrive before they end the run.
#include <free_port.hpp>
#include <plugin_driver.hpp>
#include <test_http_server.hpp>
#include <wait_until.hpp>

#include <trainhook/prometheus/push_url.hpp>
#include <trainhook/support/http_client.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;

namespace {

trainhook::support::HttpResponse scrape(int port) {
  trainhook::support::HttpClient http(
      trainhook::support::HttpClientOptions().timeout(std::chrono::seconds(10)));
  return http.perform(
      trainhook::support::HttpRequest::get("http://127.0.0.1:" + std::to_string(port) + "/metrics"));
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Fixture {
  testkit::Library lib{testkit::plugin_path("prometheus")};
  testkit::FakeHost host;
  testkit::Run run;
  int port = trainhook::testkit::free_port();
  std::string config(const std::string& pushgateway) const {
    return R"({"listen":"127.0.0.1:)" + std::to_string(port) + R"(","push_interval":3600)" +
           (pushgateway.empty() ? "" : R"(,"pushgateway_url":")" + pushgateway + "\"") + "}";
  }
  // Train begin, one step and one log.
  void train(testkit::Instance& cb) {
    run.state.train_batch_size = 8;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    cb.fire(TH_EVENT_STEP_BEGIN, run);
    run.state.global_step = 1;
    cb.fire(TH_EVENT_STEP_END, run);
    testkit::Values logs({{"loss", 0.5}, {"eval/acc", 0.25}});
    cb.fire(TH_EVENT_LOG, run, logs.view());
  }
  void cb_step(testkit::Instance& cb) {
    cb.fire(TH_EVENT_STEP_BEGIN, run);
    ++run.state.global_step;
    cb.fire(TH_EVENT_STEP_END, run);
  }
};

const std::string kGroup =
    "/metrics/job@base64/dHJhaW5ob29r/run_name@base64/dGVzdC1ydW4";  // trainhook, test-run

}  // namespace

TEST_CASE("the exporter serves the run from train begin to train end") {
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(""));
  CHECK(scrape(f.port).status == 0);  // nothing before train begin
  f.train(cb);
  const auto r = scrape(f.port);
  REQUIRE_MESSAGE(r.ok(), r.describe());
  CHECK(has(r.body, R"(trainhook_loss{job="trainhook",run_name="test-run"} 0.5)"));
  CHECK(has(r.body, R"(trainhook_eval_acc{job="trainhook",run_name="test-run"} 0.25)"));
  CHECK(has(r.body, R"(trainhook_steps_total{job="trainhook",run_name="test-run"} 1)"));
  CHECK(has(r.body, R"(trainhook_samples_total{job="trainhook",run_name="test-run"} 8)"));
  CHECK(has(r.body, R"(trainhook_up{job="trainhook",run_name="test-run"} 1)"));
  cb.fire(TH_EVENT_TRAIN_END, f.run);
  CHECK(scrape(f.port).status == 0);  // stopped with the run (linger 0)
  CHECK_MESSAGE(f.host.has(TH_LOG_INFO, "served /metrics on port " + std::to_string(f.port)),
                f.host.all_logs());
}

TEST_CASE("a step lasts from its events' times (Event::time), not from when the plugin is called") {
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(""));
  cb.fire(TH_EVENT_TRAIN_BEGIN, f.run);
  // As an isolated exporter sees it: both events delivered late, together.
  f.run.time_ns = 1'000'000'000;
  cb.fire(TH_EVENT_STEP_BEGIN, f.run);
  f.run.state.global_step = 1;
  f.run.time_ns = 1'250'000'000;
  cb.fire(TH_EVENT_STEP_END, f.run);
  const auto r = scrape(f.port);
  REQUIRE_MESSAGE(r.ok(), r.describe());
  CHECK_MESSAGE(has(r.body, R"(trainhook_step_duration_seconds_sum{job="trainhook",run_name="test-run"} 0.25)"),
                r.body);
  CHECK(f.host.observe_only == (TH_EVENT_BIT(TH_EVENT_STEP_BEGIN) | TH_EVENT_BIT(TH_EVENT_STEP_END) |
                                TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_EVALUATE)));
  cb.fire(TH_EVENT_TRAIN_END, f.run);
}

TEST_CASE("a finished run pushes at train begin and at train end with the last-success time") {
  TestHttpServer pgw([](const TestRequest&) { return TestReply{}; });
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(pgw.url()));
  f.train(cb);
  REQUIRE(testkit::wait_until([&] { return !pgw.requests().empty(); }));
  cb.fire(TH_EVENT_TRAIN_END, f.run);
  const std::vector<TestRequest> pushes = pgw.requests();
  REQUIRE(pushes.size() == 2);
  for (const TestRequest& p : pushes) {
    CHECK(p.method == "PUT");
    CHECK(p.target == kGroup);
    CHECK(p.headers.at("content-type") == "text/plain; version=0.0.4; charset=utf-8");
  }
  CHECK(has(pushes[0].body, R"(trainhook_up{job="trainhook",run_name="test-run"} 1)"));
  CHECK(has(pushes[1].body, R"(trainhook_up{job="trainhook",run_name="test-run"} 0)"));
  CHECK(has(pushes[1].body, R"(trainhook_loss{job="trainhook",run_name="test-run"} 0.5)"));
  CHECK(has(pushes[1].body, "trainhook_last_success_timestamp_seconds{"));
  CHECK_MESSAGE(f.host.has(TH_LOG_INFO, "2 of 2 pushes to " + pgw.url() + kGroup + " succeeded"),
                f.host.all_logs());
}

TEST_CASE("an EXCEPTION sets up to 0 and pushes the final values without a last-success time") {
  TestHttpServer pgw([](const TestRequest&) { return TestReply{}; });
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(pgw.url()));
  f.train(cb);
  REQUIRE(testkit::wait_until([&] { return !pgw.requests().empty(); }));
  cb.fire(TH_EVENT_EXCEPTION, f.run);
  const std::vector<TestRequest> pushes = pgw.requests();
  REQUIRE(pushes.size() == 2);
  CHECK(has(pushes[1].body, R"(trainhook_up{job="trainhook",run_name="test-run"} 0)"));
  CHECK(has(pushes[1].body, R"(trainhook_steps_total{job="trainhook",run_name="test-run"} 1)"));
  CHECK_FALSE(has(pushes[1].body, "trainhook_last_success_timestamp_seconds{"));
  CHECK(scrape(f.port).status == 0);
  cb.fire(TH_EVENT_TRAIN_END, f.run);  // nothing follows an EXCEPTION; a stray one is ignored
  CHECK(pgw.requests().size() == 2);
}

TEST_CASE("failed pushes are warned about with the URL and the status and counted in the end line") {
  TestHttpServer pgw([](const TestRequest&) {
    TestReply r;
    r.status = 503;
    r.body = "down for maintenance";
    return r;
  });
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(pgw.url()));
  f.train(cb);
  REQUIRE(testkit::wait_until([&] { return !pgw.requests().empty(); }));
  cb.fire(TH_EVENT_TRAIN_END, f.run);  // the final push is tried 3 times
  CHECK(pgw.requests().size() == 4);
  CHECK_MESSAGE(f.host.count_logs(TH_LOG_WARN, "push to the Pushgateway " + pgw.url() + kGroup +
                                                   " failed: HTTP 503: down for maintenance") == 1,
                f.host.all_logs());
  CHECK_MESSAGE(f.host.has(TH_LOG_WARN, "0 of 2 pushes to " + pgw.url() + kGroup + " succeeded"),
                f.host.all_logs());
}

TEST_CASE("a taken port fails train begin naming the address and the key") {
  Fixture f;
  testkit::Instance first(f.lib.callback("prometheus"), f.host, f.config(""));
  first.fire(TH_EVENT_TRAIN_BEGIN, f.run);
  testkit::FakeHost other_host;
  testkit::Instance second(f.lib.callback("prometheus"), other_host, f.config(""));
  std::string error;
  try {
    second.fire(TH_EVENT_TRAIN_BEGIN, f.run);
  } catch (const testkit::CallError& e) {
    error = e.what();
  }
  CHECK_MESSAGE(has(error, "127.0.0.1:" + std::to_string(f.port)), error);
  CHECK_MESSAGE(has(error, "plugin_config prometheus.listen"), error);
  CHECK_MESSAGE(has(error, "Address already in use"), error);
}

TEST_CASE("processes other than world rank 0 export nothing") {
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host, f.config(""));
  f.run.state.is_world_process_zero = 0;
  f.run.state.process_index = 1;
  f.train(cb);
  CHECK(scrape(f.port).status == 0);
}

TEST_CASE("a slow Pushgateway gets coalesced pushes and the final push carries the final values") {
  TestHttpServer pgw([](const TestRequest&) {
    TestReply r;
    r.delay = std::chrono::milliseconds(200);
    return r;
  });
  Fixture f;
  testkit::Instance cb(f.lib.callback("prometheus"), f.host,
                       R"({"listen":"127.0.0.1:)" + std::to_string(f.port) +
                           R"(","push_interval":0.1,"pushgateway_url":")" + pgw.url() + "\"}");
  f.train(cb);
  // Steps as fast as the host can fire them: many intervals pass during each push.
  int64_t steps = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (pgw.requests().size() < 3 && std::chrono::steady_clock::now() < deadline) {
    f.cb_step(cb);
    ++steps;
  }
  REQUIRE(pgw.requests().size() >= 3);
  cb.fire(TH_EVENT_TRAIN_END, f.run);
  const std::vector<TestRequest> pushes = pgw.requests();
  // Requests made while a push is in flight coalesce: few pushes although
  // many steps passed the interval.
  CHECK(pushes.size() <= 6);
  CHECK(has(pushes.back().body, R"(trainhook_up{job="trainhook",run_name="test-run"} 0)"));
  CHECK(has(pushes.back().body, "trainhook_last_success_timestamp_seconds{"));
  CHECK(has(pushes.back().body, R"(trainhook_steps_total{job="trainhook",run_name="test-run"} )" +
                                    std::to_string(steps + 1) + "\n"));
}

TEST_CASE("a linger longer than callback_end_timeout allows is warned about at train begin") {
  Fixture f;
  f.host.args_json = R"({"callback_end_timeout": 60})";
  testkit::Instance cb(f.lib.callback("prometheus"), f.host,
                       R"({"listen":"127.0.0.1:)" + std::to_string(f.port) + R"(","linger":50})");
  cb.fire(TH_EVENT_TRAIN_BEGIN, f.run);
  CHECK_MESSAGE(f.host.count_logs(TH_LOG_WARN, "--callback_end_timeout (60 s)") == 1, f.host.all_logs());
  testkit::FakeHost quiet;
  quiet.args_json = R"({"callback_end_timeout": 120})";
  Fixture g;
  testkit::Instance ok(g.lib.callback("prometheus"), quiet,
                       R"({"listen":"127.0.0.1:)" + std::to_string(g.port) + R"(","linger":50})");
  ok.fire(TH_EVENT_TRAIN_BEGIN, g.run);
  CHECK(quiet.count_logs(TH_LOG_WARN, "callback_end_timeout") == 0);
  // Both are destroyed without train end: the trainer is tearing down, no linger.
}
