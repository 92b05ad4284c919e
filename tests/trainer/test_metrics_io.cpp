// log_metrics formatting and save_metrics files (HF layout).
#include <trainhook/trainer/memory_metrics.hpp>
#include <trainhook/trainer/metrics_io.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <temp_dir.hpp>

#include <fstream>
#include <sstream>

using namespace trainhook;
namespace fs = std::filesystem;

TEST_CASE("metrics are formatted as HF does") {
  CHECK(format_metric("train_runtime", 3725.5) == "1:02:05.50");
  CHECK(format_metric("train_mem_cpu_alloc_delta", 3.0 * 1024 * 1024) == "3MB");
  CHECK(format_metric("total_flos", 5.0 * 1024 * 1024 * 1024) == "5GF");
  CHECK(format_metric("epoch", 3) == "3");
  CHECK(format_metric("eval_accuracy", 0.96123) == "0.9612");
  std::ostringstream out;
  log_metrics(out, "eval", {{"eval_loss", 0.5}, {"epoch", 2}});
  CHECK(out.str() == "***** eval metrics *****\n  epoch     = 2\n  eval_loss = 0.5\n");
}

TEST_CASE("save_metrics writes <split>_results.json and merges all_results.json") {
  const trainhook::testkit::TempDir tmp("trainhook-metrics");
  const fs::path dir = tmp.path / "output";  // not made yet: save_metrics makes it
  save_metrics(dir, "train", {{"train_loss", 0.25}, {"epoch", 3}});
  save_metrics(dir, "eval", {{"eval_accuracy", 0.9}, {"epoch", 3}});
  nlohmann::json train, all;
  std::ifstream(dir / "train_results.json") >> train;
  std::ifstream(dir / "all_results.json") >> all;
  CHECK(train == nlohmann::json{{"train_loss", 0.25}, {"epoch", 3}});
  CHECK(all == nlohmann::json{{"train_loss", 0.25}, {"eval_accuracy", 0.9}, {"epoch", 3}});
  CHECK(fs::exists(dir / "eval_results.json"));
  std::ofstream(dir / "all_results.json") << "not json";
  CHECK_THROWS_WITH_AS(save_metrics(dir, "test", {{"test_loss", 1}}), doctest::Contains("all_results.json"),
                       std::runtime_error);
}

TEST_CASE("the memory tracker adds RSS deltas for its stage only when enabled") {
  Metrics m;
  MemoryTracker off(false);
  off.start("train");
  off.stop_and_update("train", m);
  CHECK(m.empty());
  MemoryTracker on(true);
  on.start("train");
  on.start("eval");  // nested: ignored, as HF ignores evaluate() inside train()
  std::vector<char> block(32 << 20, 1);
  on.stop_and_update("eval", m);
  CHECK(m.empty());
  on.stop_and_update("train", m);
  REQUIRE(current_rss_bytes());
  CHECK(m.count("train_mem_cpu_alloc_delta") == 1);
  CHECK(m.at("train_mem_cpu_alloc_delta") >= static_cast<double>(16 << 20));
  CHECK(m.at("train_mem_cpu_peaked_delta") >= 0);
  CHECK(block[100] == 1);
}
