// run_metrics: the series a run exports, label escaping by prometheus-cpp's
// text format, the one-time warning for two keys with one name, and the
// scrape count the linger wait uses.
#include <trainhook/prometheus/run_metrics.hpp>

#include <prometheus/text_serializer.h>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace trainhook::prometheus;

namespace {

std::string exposition(const RunMetrics& m) {
  return ::prometheus::TextSerializer().Serialize(m.registry()->Collect());
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("label values with quote backslash and newline are escaped in the text format") {
  RunMetrics m("a\"b\\c\nd", "job \"x\"", {});
  m.set_logged("loss", 0.5);
  const std::string text = exposition(m);
  CHECK(has(text, R"(trainhook_loss{job="job \"x\"",run_name="a\"b\\c\nd"} 0.5)"));
  CHECK_FALSE(has(text, "c\nd"));
}

TEST_CASE("logged numbers become gauges holding the last value") {
  RunMetrics m("run", "trainhook", {});
  m.set_logged("loss", 2.0);
  m.set_logged("eval/acc", 0.25);
  m.set_logged("loss", 1.5);
  const std::string text = exposition(m);
  CHECK(has(text, "# TYPE trainhook_loss gauge"));
  CHECK(has(text, R"(trainhook_loss{job="trainhook",run_name="run"} 1.5)"));
  CHECK(has(text, R"(trainhook_eval_acc{job="trainhook",run_name="run"} 0.25)"));
  CHECK(has(text, R"(trainhook_up{job="trainhook",run_name="run"} 1)"));
  CHECK_FALSE(has(text, "trainhook_last_success_timestamp_seconds{"));
}

TEST_CASE("a second key with the same name is warned about once and not exported") {
  std::vector<std::string> warnings;
  RunMetrics m("run", "trainhook", [&](trainhook::LogLevel level, const std::string& message) {
    if (level == trainhook::LogLevel::warn) warnings.push_back(message);
  });
  m.set_logged("eval/acc", 0.25);
  m.set_logged("eval_acc", 0.75);
  m.set_logged("eval_acc", 0.5);
  m.set_logged("up", 7);
  REQUIRE(warnings.size() == 2);
  CHECK(has(warnings[0], "'eval_acc'"));
  CHECK(has(warnings[0], "trainhook_eval_acc"));
  CHECK(has(warnings[0], "'eval/acc'"));
  CHECK(has(warnings[1], "'up'"));
  CHECK(has(warnings[1], "plugin itself"));
  const std::string text = exposition(m);
  CHECK(has(text, R"(trainhook_eval_acc{job="trainhook",run_name="run"} 0.25)"));
  CHECK(has(text, R"(trainhook_up{job="trainhook",run_name="run"} 1)"));
}

TEST_CASE("steps samples tokens step time and the liveness timestamp") {
  RunMetrics m("run", "trainhook", {});
  m.tokens_baseline(100);
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::seconds(10);
  m.step_begin(t0);
  m.step_end(t0 + std::chrono::milliseconds(20), 1700000000.5, 64, 164);
  m.step_begin(t0 + std::chrono::milliseconds(30));
  m.step_end(t0 + std::chrono::milliseconds(2030), 1700000002.5, 64, 164);
  const std::string text = exposition(m);
  CHECK(has(text, R"(trainhook_steps_total{job="trainhook",run_name="run"} 2)"));
  CHECK(has(text, R"(trainhook_samples_total{job="trainhook",run_name="run"} 128)"));
  CHECK(has(text, R"(trainhook_tokens_total{job="trainhook",run_name="run"} 64)"));
  CHECK(has(text, R"(trainhook_last_step_timestamp_seconds{job="trainhook",run_name="run"} 1700000002.5)"));
  CHECK(has(text, R"(trainhook_step_duration_seconds_count{job="trainhook",run_name="run"} 2)"));
  CHECK(has(text, R"(trainhook_step_duration_seconds_bucket{job="trainhook",run_name="run",le="0.025"} 1)"));
  CHECK(has(text, R"(trainhook_step_duration_seconds_bucket{job="trainhook",run_name="run",le="2.5"} 2)"));
  CHECK(has(text, R"(trainhook_step_duration_seconds_bucket{job="trainhook",run_name="run",le="+Inf"} 2)"));
}

TEST_CASE("the end of a run sets up to 0 and a finished run its last-success time") {
  RunMetrics m("run", "trainhook", {});
  m.set_up(false);
  m.set_last_success(1700000003);
  const std::string text = exposition(m);
  CHECK(has(text, R"(trainhook_up{job="trainhook",run_name="run"} 0)"));
  CHECK(has(text, R"(trainhook_last_success_timestamp_seconds{job="trainhook",run_name="run"} 1700000003)"));
}

TEST_CASE("only collections after mark_final count as reads of the final values") {
  RunMetrics m("run", "trainhook", {});
  ScrapeView view(m.registry());
  view.Collect();
  CHECK_FALSE(view.wait_final_scrape(std::chrono::milliseconds(0), [] { return false; }));
  view.mark_final();
  CHECK_FALSE(view.wait_final_scrape(std::chrono::milliseconds(0), [] { return false; }));
  CHECK(!view.Collect().empty());
  CHECK(view.wait_final_scrape(std::chrono::milliseconds(0), [] { return false; }));
}

TEST_CASE("keys beyond the gauge limit are not exported and warned about once") {
  std::vector<std::string> warnings;
  RunMetrics m("run", "trainhook", [&](trainhook::LogLevel level, const std::string& message) {
    if (level == trainhook::LogLevel::warn) warnings.push_back(message);
  });
  for (size_t i = 0; i < RunMetrics::kMaxLoggedGauges + 5; ++i) m.set_logged("k" + std::to_string(i), 1.0);
  m.set_logged("k0", 2.0);  // a key it has keeps updating
  const std::string text = exposition(m);
  CHECK(has(text, R"(trainhook_k0{job="trainhook",run_name="run"} 2)"));
  CHECK(has(text, "trainhook_k" + std::to_string(RunMetrics::kMaxLoggedGauges - 1) + "{"));
  CHECK_FALSE(has(text, "trainhook_k" + std::to_string(RunMetrics::kMaxLoggedGauges) + "{"));
  REQUIRE(warnings.size() == 1);
  CHECK(has(warnings[0], "'k" + std::to_string(RunMetrics::kMaxLoggedGauges) + "'"));
}
