// The sender against a scripted fake MLflow server that stores metrics
// naively (every accepted row is kept, duplicates included), so these tests
// prove our own duplicate avoidance, ordering and spooling.
#include <doctest/doctest.h>
#include <trainhook/abi.h>
#include <temp_dir.hpp>
#include <trainhook/mlflow/sender.hpp>
#include <wait_until.hpp>

#include <nlohmann/json.hpp>

#include "test_http_server.hpp"

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

using namespace trainhook::mlflow;
using namespace std::chrono_literals;
using trainhook::testing::TestHttpServer;
using trainhook::testing::TestReply;
using trainhook::testing::TestRequest;
using trainhook::testkit::TempDir;
namespace fs = std::filesystem;

namespace {

struct FakeMlflow {
  std::mutex mu;
  std::vector<nlohmann::json> metrics;  // every stored row, in arrival order
  std::vector<nlohmann::json> params;
  std::vector<std::string> statuses;
  std::atomic<int> drop_after_store{0};  // store, then close without answering (n times)
  std::atomic<bool> down{false};         // 503 for everything
  std::atomic<bool> reject_metrics{false};
  std::atomic<bool> hold_metrics{false};    // a metrics log-batch waits here until cleared
  std::atomic<bool> holding{false};         // such a request is waiting now
  std::atomic<int> fail_metrics{0};         // then answers 503 without storing (n times)
  std::atomic<bool> html_log_batch{false};  // log-batch answers 200 with an HTML page (a proxy's)
  size_t history_page = 25000;              // get-history points per page at most (server side)
  std::atomic<size_t> history_pages{0};     // get-history answers given

  // A query parameter's value (no percent-decoding needed for these tests).
  static std::string query(const std::string& target, const std::string& name) {
    const size_t q = target.find('?');
    if (q == std::string::npos) return "";
    size_t at = q + 1;
    while (at < target.size()) {
      const size_t amp = target.find('&', at);
      const std::string pair = target.substr(at, amp == std::string::npos ? std::string::npos : amp - at);
      if (pair.compare(0, name.size() + 1, name + "=") == 0) return pair.substr(name.size() + 1);
      if (amp == std::string::npos) break;
      at = amp + 1;
    }
    return "";
  }

  TestReply handle(const TestRequest& r) {
    TestReply out;
    if (down) {
      out.status = 503;
      return out;
    }
    if (r.target.find("runs/log-batch") != std::string::npos &&
        !nlohmann::json::parse(r.body)["metrics"].empty()) {
      while (hold_metrics) {
        holding = true;
        std::this_thread::sleep_for(1ms);
      }
      holding = false;
      if (fail_metrics > 0) {
        --fail_metrics;
        out.status = 503;
        return out;
      }
    }
    if (html_log_batch && r.target.find("runs/log-batch") != std::string::npos) {
      out.body = "<html><body>Please log in</body></html>";
      return out;
    }
    std::lock_guard<std::mutex> lock(mu);
    if (r.target.find("experiments/get-by-name") != std::string::npos) {
      out.status = 404;
      out.body = R"({"error_code": "RESOURCE_DOES_NOT_EXIST", "message": "no such experiment"})";
    } else if (r.target.find("experiments/create") != std::string::npos) {
      out.body = R"({"experiment_id": "7"})";
    } else if (r.target.find("runs/create") != std::string::npos) {
      out.body =
          R"({"run": {"info": {"run_id": "run1", "artifact_uri": "mlflow-artifacts:/7/run1/artifacts"}}})";
    } else if (r.target.find("runs/log-batch") != std::string::npos) {
      auto body = nlohmann::json::parse(r.body);
      if (reject_metrics && !body["metrics"].empty()) {
        out.status = 400;
        out.body = R"({"error_code": "INVALID_PARAMETER_VALUE", "message": "bad metric"})";
        return out;
      }
      for (auto& m : body["metrics"]) metrics.push_back(m);
      for (auto& p : body["params"]) params.push_back(p);
      if (drop_after_store > 0) {
        --drop_after_store;
        out.drop = true;
      }
      out.body = "{}";
    } else if (r.target.find("metrics/get-history") != std::string::npos) {
      // Pages as MLflow does: at most max_results (and at most history_page, a
      // server-side cap), page_token = offset of the next page here.
      const std::string key = query(r.target, "metric_key");
      const std::string token = query(r.target, "page_token");
      const size_t offset = token.empty() ? 0 : std::stoul(token);
      size_t limit = std::min<size_t>(history_page, std::stoul(query(r.target, "max_results")));
      nlohmann::json res{{"metrics", nlohmann::json::array()}};
      size_t seen = 0;
      for (auto& m : metrics) {
        if (m["key"] != key) continue;
        if (seen++ < offset) continue;
        if (limit == 0) {
          res["next_page_token"] = std::to_string(seen - 1);
          break;
        }
        res["metrics"].push_back(m);
        --limit;
      }
      ++history_pages;
      out.body = res.dump();
    } else if (r.target.find("runs/update") != std::string::npos) {
      statuses.push_back(nlohmann::json::parse(r.body)["status"]);
      out.body = "{}";
    } else {
      out.status = 404;
    }
    return out;
  }
};

MlflowOptions config_for(const TestHttpServer& server) {
  MlflowOptions c;
  c.tracking_uri(server.url());
  c.experiment_name("exp");
  c.retry_initial(10ms);
  c.retry_max(50ms);
  c.request_timeout(5000ms);
  return c;
}

// A test's spool folder, inside its TempDir and not made yet (the sender makes it).
std::string spool_in(const TempDir& tmp) { return (tmp.path / "spool").string(); }

struct Harness {
  Sender sender;
  trainhook::support::Worker<Record> worker;
  std::vector<std::string> logs;
  Harness(MlflowOptions c, RunPlan plan, std::string spool)
      : sender(std::move(c), std::move(plan), std::move(spool),
               [](trainhook::LogLevel, const std::string&) {}),
        worker([this](std::vector<Record>& b, trainhook::support::WorkerContext& ctx) {
          return sender.handle(b, ctx);
        }) {
    // As the plugin wires it (enqueues come after this).
    sender.take_queued_from([this] { return worker.take_queued(1000); });
  }
};

// A fake server and a sender with at most memory_records in memory whose run
// exists: step 1 (timestamp ts0 + 1) is delivered.
struct RunExists {
  FakeMlflow fake;
  TestHttpServer server{[this](const TestRequest& r) { return fake.handle(r); }};
  TempDir tmp;
  std::string spool;
  Harness h;
  RunExists(const char* name, size_t memory_records, int64_t ts0)
      : tmp(std::string("th_mlflow_") + name),
        spool(spool_in(tmp)),
        h(bounded(config_for(server), memory_records), RunPlan{}, spool) {
    h.worker.enqueue(Record::metric("loss", 1.0, ts0 + 1, 1));
    REQUIRE(h.worker.flush(30s));
  }
  static MlflowOptions bounded(MlflowOptions c, size_t memory_records) {
    c.memory_records(memory_records);
    return c;
  }
};

}  // namespace

TEST_CASE("setup creates the experiment and run and then params and metrics arrive once each") {
  FakeMlflow fake;
  TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
  RunPlan plan;
  plan.run_name = "r";
  for (int i = 0; i < 130; ++i) plan.params.emplace_back("p" + std::to_string(i), std::to_string(i));
  const TempDir tmp("th_mlflow_basic");
  Harness h(config_for(server), plan, spool_in(tmp));
  for (int s = 1; s <= 40; ++s) h.worker.enqueue(Record::metric("loss", 1.0 / s, 1000 + s, s));
  h.worker.enqueue(Record::end_run("FINISHED", 5000));
  REQUIRE(h.worker.flush(30s));
  h.worker.stop();
  CHECK(h.sender.run_id() == "run1");
  std::lock_guard<std::mutex> lock(fake.mu);
  CHECK(fake.params.size() == 130);
  REQUIRE(fake.metrics.size() == 40);
  for (int s = 1; s <= 40; ++s) CHECK(fake.metrics[static_cast<size_t>(s - 1)]["step"] == s);
  CHECK(fake.statuses == std::vector<std::string>{"FINISHED"});
  size_t log_batches = 0;
  for (const auto& q : server.requests()) log_batches += q.target.find("log-batch") != std::string::npos;
  CHECK(log_batches >= 3);  // 100 + 30 params, then the metrics (coalesced)
}

TEST_CASE("a batch stored by the server whose answer was lost is not stored twice") {
  FakeMlflow fake;
  TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
  const TempDir tmp("th_mlflow_dup");
  Harness h(config_for(server), RunPlan{}, spool_in(tmp));
  fake.history_page = 10;  // the history check must follow next_page_token
  for (int s = 1; s <= 25; ++s) {
    h.worker.enqueue(Record::metric("loss", 1.0 / s, 2000 + s, s));
    h.worker.enqueue(Record::metric("lr", 0.1, 2000 + s, s));
  }
  REQUIRE(h.worker.flush(30s));
  // Only now does the server lose an answer: "loss" then has at least 26 points
  // stored, so the check must read three pages whatever way the worker batched
  // the records above (it takes what is queued when it wakes).
  fake.drop_after_store = 1;
  for (int s = 26; s <= 30; ++s) h.worker.enqueue(Record::metric("loss", 1.0 / s, 2000 + s, s));
  REQUIRE(h.worker.flush(30s));
  h.worker.stop();
  std::lock_guard<std::mutex> lock(fake.mu);
  std::map<std::pair<std::string, int>, int> count;
  for (const auto& m : fake.metrics) ++count[{m["key"].get<std::string>(), m["step"].get<int>()}];
  CHECK(fake.metrics.size() == 55);
  for (const auto& [k, n] : count) CHECK_MESSAGE(n == 1, k.first, " step ", k.second);
  size_t history_checks = 0;
  for (const auto& q : server.requests()) history_checks += q.target.find("get-history") != std::string::npos;
  CHECK(history_checks >= 1);
  CHECK(fake.history_pages >= 3);  // >= 26 points of "loss", 10 per page
}

TEST_CASE("while the server is down records spill to the spool and arrive in order when it is back") {
  RunExists run("down", 10, 3000);
  FakeMlflow& fake = run.fake;
  Harness& h = run.h;
  const std::string& spool = run.spool;
  fake.down = true;
  for (int s = 2; s <= 200; ++s) h.worker.enqueue(Record::metric("loss", 1.0 / s, 3000 + s, s));
  // Wait until the sender moved records to disk.
  CHECK(testkit::wait_until([&] { return fs::exists(fs::path(spool) / "run1.jsonl"); }));
  CHECK_FALSE(h.worker.flush(50ms));
  fake.down = false;
  REQUIRE(h.worker.flush(60s));
  h.worker.stop();
  CHECK_FALSE(fs::exists(fs::path(spool) / "run1.jsonl"));  // all acknowledged
  std::lock_guard<std::mutex> lock(fake.mu);
  REQUIRE(fake.metrics.size() == 200);
  for (size_t i = 0; i < 200; ++i) CHECK(fake.metrics[i]["step"] == static_cast<int>(i + 1));
}

TEST_CASE(
    "during a slow request the queue is taken in and spilled, and a failed request goes back in front") {
  RunExists run("slow", 20, 6000);
  FakeMlflow& fake = run.fake;
  Harness& h = run.h;
  const std::string& spool = run.spool;
  fake.hold_metrics = true;
  fake.fail_metrics = 1;
  h.worker.enqueue(Record::metric("loss", 0.5, 6002, 2));
  REQUIRE(testkit::wait_until(
      [&] { return fake.holding.load(); }));  // step 2's request is in flight and stays so
  for (int s = 3; s <= 400; ++s) h.worker.enqueue(Record::metric("loss", 1.0 / s, 6000 + s, s));
  // Only the sender taking them in during the request empties the queue, and
  // only the memory bound puts them on disk.
  const fs::path file = fs::path(spool) / "run1.jsonl";
  testkit::wait_until([&] { return h.worker.stats().queued == 0 && fs::exists(file); });
  CHECK(h.worker.stats().queued == 0);
  CHECK(fs::exists(file));
  CHECK(fake.holding);
  fake.hold_metrics = false;  // step 2's request fails (503); it must still arrive first
  REQUIRE(h.worker.flush(60s));
  h.worker.stop();
  CHECK_FALSE(fs::exists(file));  // all acknowledged
  std::lock_guard<std::mutex> lock(fake.mu);
  REQUIRE(fake.metrics.size() == 400);
  for (size_t i = 0; i < 400; ++i) CHECK(fake.metrics[i]["step"] == static_cast<int>(i + 1));
}

TEST_CASE("records still held at the end are spooled and a later sender delivers them") {
  FakeMlflow fake;
  const TempDir tmp("th_mlflow_later");
  const std::string spool = spool_in(tmp);
  {
    TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
    Harness h(config_for(server), RunPlan{}, spool);
    h.worker.enqueue(Record::metric("loss", 1.0, 4001, 1));
    REQUIRE(h.worker.flush(30s));
    fake.down = true;
    for (int s = 2; s <= 20; ++s) h.worker.enqueue(Record::metric("loss", 1.0 / s, 4000 + s, s));
    h.worker.enqueue(Record::end_run("FINISHED", 4999));
    CHECK_FALSE(h.worker.flush(200ms));
    auto rest = h.worker.stop();
    h.sender.spill_everything(std::move(rest));
    CHECK(h.sender.spooled() == 20);
    CHECK(h.sender.spool_path() == (fs::path(spool) / "run1.jsonl").string());
  }
  fake.down = false;
  TestHttpServer resumed([&](const TestRequest& r) {
    if (r.target.find("runs/get") != std::string::npos) {
      TestReply out;
      out.body = R"({"run": {"info": {"run_id": "run1", "artifact_uri": "mlflow-artifacts:/7/run1/artifacts"},
                              "data": {"params": []}}})";
      return out;
    }
    return fake.handle(r);
  });
  MlflowOptions c = config_for(resumed);
  c.run_id("run1");  // resume the run the spool belongs to
  Harness later(c, RunPlan{}, spool);
  later.worker.enqueue(Record::metric("loss", 0.01, 5000, 21));
  REQUIRE(later.worker.flush(30s));
  later.worker.stop();
  std::lock_guard<std::mutex> lock(fake.mu);
  REQUIRE(fake.metrics.size() == 21);
  for (size_t i = 0; i < 21; ++i) CHECK(fake.metrics[i]["step"] == static_cast<int>(i + 1));
  // RUNNING from the resume; the earlier process's FINISHED is not replayed.
  CHECK(fake.statuses == std::vector<std::string>{"RUNNING"});
}

TEST_CASE("a rejected batch is dropped once with the server's message and later records still go") {
  FakeMlflow fake;
  TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
  std::vector<std::string> errors;
  std::mutex emu;
  const TempDir tmp("th_mlflow_reject");
  Sender sender(config_for(server), RunPlan{}, spool_in(tmp),
                [&](trainhook::LogLevel level, const std::string& m) {
                  std::lock_guard<std::mutex> lock(emu);
                  if (level == trainhook::LogLevel::error) errors.push_back(m);
                });
  trainhook::support::Worker<Record> worker(
      [&](std::vector<Record>& b, trainhook::support::WorkerContext& ctx) { return sender.handle(b, ctx); });
  fake.reject_metrics = true;
  worker.enqueue(Record::metric("loss", 1.0, 1, 1));
  REQUIRE(worker.flush(30s));
  fake.reject_metrics = false;
  worker.enqueue(Record::metric("loss", 0.5, 2, 2));
  REQUIRE(worker.flush(30s));
  worker.stop();
  CHECK(worker.stats().failed == 1);
  CHECK(worker.stats().delivered == 1);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("bad metric") != std::string::npos);
}

// An answer 200 whose body is not JSON (a proxy's login page) gave
// no warning at all.
TEST_CASE("an answer 200 that is not JSON is warned about once, naming the request") {
  FakeMlflow fake;
  TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
  std::vector<std::string> warnings;
  std::mutex wmu;
  const TempDir tmp("th_mlflow_html");
  Sender sender(config_for(server), RunPlan{}, spool_in(tmp),
                [&](trainhook::LogLevel level, const std::string& m) {
                  std::lock_guard<std::mutex> lock(wmu);
                  if (level == trainhook::LogLevel::warn) warnings.push_back(m);
                });
  trainhook::support::Worker<Record> worker(
      [&](std::vector<Record>& b, trainhook::support::WorkerContext& ctx) { return sender.handle(b, ctx); });
  fake.html_log_batch = true;
  worker.enqueue(Record::metric("loss", 1.0, 1, 1));
  REQUIRE(worker.flush(30s));
  worker.enqueue(Record::metric("loss", 0.5, 2, 2));
  REQUIRE(worker.flush(30s));
  worker.stop();
  std::lock_guard<std::mutex> lock(wmu);
  size_t not_json = 0;
  for (const auto& w : warnings) {
    if (w.find("a body that is not JSON (<html><body>Please log in") == std::string::npos) continue;
    ++not_json;
    CHECK(w.find("runs/log-batch with HTTP 200") != std::string::npos);
  }
  CHECK(not_json == 1);
}

TEST_CASE("a failed run's end tags the reason before the status and the reason survives the spool") {
  FakeMlflow fake;
  TestHttpServer server([&](const TestRequest& r) { return fake.handle(r); });
  const TempDir tmp("th_mlflow_failure-tag");
  Harness h(config_for(server), RunPlan{}, spool_in(tmp));
  h.worker.enqueue(Record::metric("loss", 0.5, 1001, 1));
  h.worker.enqueue(Record::end_run("FAILED", 5000, "error: cannot write checkpoint-20"));
  REQUIRE(h.worker.flush(30s));
  h.worker.stop();
  {
    std::lock_guard<std::mutex> lock(fake.mu);
    CHECK(fake.statuses == std::vector<std::string>{"FAILED"});
  }
  // The tag goes in a log-batch of its own, before runs/update.
  size_t tag_at = 0, update_at = 0, i = 0;
  for (const auto& q : server.requests()) {
    ++i;
    if (q.target.find("runs/log-batch") != std::string::npos) {
      const auto body = nlohmann::json::parse(q.body);
      for (const auto& t : body.value("tags", nlohmann::json::array()))
        if (t["key"] == kFailureTag && t["value"] == "error: cannot write checkpoint-20") tag_at = i;
    }
    if (q.target.find("runs/update") != std::string::npos) update_at = i;
  }
  CHECK(tag_at > 0);
  CHECK(update_at > tag_at);

  // Spooled and read back (a later run delivers it), the reason is kept.
  const auto back = from_line(to_line(Record::end_run("KILLED", 7, "signal: stopped by a second SIGINT")));
  REQUIRE(back.has_value());
  CHECK(back->kind == Record::Kind::end_run);
  CHECK(back->key == "KILLED");
  CHECK(back->reason == "signal: stopped by a second SIGINT");
  const auto plain = from_line(to_line(Record::end_run("FINISHED", 7)));
  REQUIRE(plain.has_value());
  CHECK(plain->reason.empty());
}

TEST_CASE("a tag value is cut to MLflow's 8000 characters without splitting one") {
  const std::string fits(kMaxTagValueChars, 'x');
  CHECK(cut_tag_value(fits) == fits);
  std::string wide;
  for (size_t i = 0; i <= kMaxTagValueChars; ++i) wide += "\xC3\xA9";  // 8001 two-byte characters
  const std::string cut = cut_tag_value(wide);
  size_t chars = 0;
  for (const char c : cut) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  CHECK(chars == kMaxTagValueChars);
  CHECK(cut.size() == (kMaxTagValueChars - 6) * 2 + 6);
  CHECK(cut.substr(cut.size() - 6) == " [cut]");
}
