// The Profiler (common/profiler.hpp): totals per action, the table, the
// Chrome trace events and their tracks, and the cap on kept spans.
#include <trainhook/common/profiler.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <thread>
#include <vector>

using trainhook::Profiler;
using namespace std::chrono_literals;

namespace {

Profiler::Clock::time_point at(std::chrono::nanoseconds t) { return Profiler::Clock::time_point(t); }

nlohmann::json row(const nlohmann::json& summary, const std::string& action) {
  for (const auto& r : summary.at("actions"))
    if (r.at("action") == action) return r;
  return nullptr;
}

}  // namespace

TEST_CASE("totals per action: calls, total, mean, min, max and the share of the run, biggest first") {
  Profiler p(false);
  const int a = p.action("forward");
  const int b = p.action("[Callback]x.on_log");
  CHECK(p.action("forward") == a);
  p.record(a, at(0ms), at(10ms));
  p.record(a, at(20ms), at(50ms));
  p.record(b, at(0ms), at(5ms));
  (void)p.action("never_called");
  const auto s = p.summary(100ms);
  CHECK(s.at("run_s").get<double>() == doctest::Approx(0.1));
  REQUIRE(s.at("actions").size() == 2);  // an action never called is left out
  CHECK(s.at("actions")[0].at("action") == "forward");
  const auto f = row(s, "forward");
  CHECK(f.at("calls") == 2);
  CHECK(f.at("total_s").get<double>() == doctest::Approx(0.040));
  CHECK(f.at("mean_s").get<double>() == doctest::Approx(0.020));
  CHECK(f.at("min_s").get<double>() == doctest::Approx(0.010));
  CHECK(f.at("max_s").get<double>() == doctest::Approx(0.030));
  CHECK(f.at("percent").get<double>() == doctest::Approx(40.0));
  CHECK(row(s, "[Callback]x.on_log").at("calls") == 1);
}

TEST_CASE("the table has Lightning's columns, a Total row and one row per action") {
  Profiler p(false);
  p.record(p.action("backward"), at(0ms), at(25ms));
  const std::string t = Profiler::table(p.summary(50ms), "Profiler report");
  CHECK(t.rfind("Profiler report\n", 0) == 0);
  CHECK(t.find("Mean duration (s)") != std::string::npos);
  CHECK(t.find("Percentage %") != std::string::npos);
  CHECK(t.find("|  Total") != std::string::npos);
  const auto line_start = t.find("|  backward");
  REQUIRE(line_start != std::string::npos);
  const std::string line = t.substr(line_start, t.find('\n', line_start) - line_start);
  CHECK(line.find("0.025000") != std::string::npos);  // mean
  CHECK(line.find("50.00 %") != std::string::npos);
}

TEST_CASE("trace events: complete events in microseconds on a track per thread, named") {
  Profiler p(true);
  const int a = p.action("training_step");
  p.name_this_thread("training");
  const auto t0 = Profiler::Clock::now();
  p.record(a, t0, t0 + 1500us);
  std::thread([&] { p.record(a, t0 + 2ms, t0 + 3ms); }).join();
  const auto events = p.trace_events(1, "rank 1");
  std::vector<nlohmann::json> complete;
  std::map<int, std::string> threads;
  for (const auto& e : events) {
    CHECK(e.at("pid") == 1);
    if (e.at("ph") == "X") complete.push_back(e);
    if (e.at("ph") == "M" && e.at("name") == "thread_name") threads[e.at("tid")] = e.at("args").at("name");
    if (e.at("ph") == "M" && e.at("name") == "process_name") CHECK(e.at("args").at("name") == "rank 1");
  }
  REQUIRE(complete.size() == 2);
  CHECK(complete[0].at("dur").get<double>() == doctest::Approx(1500.0));
  CHECK(complete[1].at("ts").get<double>() - complete[0].at("ts").get<double>() == doctest::Approx(2000.0).epsilon(1e-3));
  CHECK(complete[0].at("tid") != complete[1].at("tid"));
  CHECK(threads.at(complete[0].at("tid").get<int>()) == "training");
  CHECK(threads.size() == 2);
}

TEST_CASE("past max_spans the totals still count every call and the spans left out are counted") {
  Profiler p(true, 3);
  const int a = p.action("get_train_batch");
  for (int i = 0; i < 5; ++i) p.record(a, at(std::chrono::milliseconds(i)), at(std::chrono::milliseconds(i + 1)));
  CHECK(row(p.summary(10ms), "get_train_batch").at("calls") == 5);
  CHECK(p.spans_left_out() == 2);
  size_t complete = 0;
  for (const auto& e : p.trace_events(0, "rank 0")) complete += e.at("ph") == "X" ? 1 : 0;
  CHECK(complete == 3);
}

TEST_CASE("without spans kept (simple) the trace has only the track names, and ProfileScope without a profiler does nothing") {
  Profiler p(false);
  { const trainhook::ProfileScope s(&p, p.action("evaluate")); }
  { const trainhook::ProfileScope s(nullptr, 0); }
  CHECK(row(p.summary(1ms), "evaluate").at("calls") == 1);
  for (const auto& e : p.trace_events(0, "rank 0")) CHECK(e.at("ph") == "M");
}
