// Every plugin's README.md key table is the one its option table renders: a key
// added, renamed, or given a new default or variable fails here until the
// README says so. The README's table is the one whose header is
// "| key | default | meaning |".
#include <doctest/doctest.h>

#include <trainhook/early_stopping/early_stopping_options.hpp>
#include <trainhook/ema/ema_options.hpp>
#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/grad_stats/grad_stats_options.hpp>
#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/nan_guard/nan_guard_options.hpp>
#include <trainhook/progress/progress_options.hpp>
#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_options.hpp>
#include <trainhook/support/log_history_file.hpp>
#include <trainhook/system_stats/system_stats_options.hpp>
#include <trainhook/tensorboard/tensorboard_options.hpp>
#include <trainhook/throughput/throughput_options.hpp>
#include <trainhook/wandb/wandb_options.hpp>
#ifdef TRAINHOOK_HAVE_PROMETHEUS
#include <trainhook/prometheus/prometheus_options.hpp>
#endif

#include <fstream>
#include <sstream>
#include <string>

namespace {

std::string readme_rows(const std::string& plugin) {
  const std::string path = std::string(TRAINHOOK_PLUGINS_DIR) + "/" + plugin + "/README.md";
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::string line, rows;
  bool in_table = false, seen = false;
  while (std::getline(in, line)) {
    if (line == "| key | default | meaning |") {
      REQUIRE_MESSAGE(!seen, path << " has two key tables");
      in_table = seen = true;
      std::getline(in, line);  // |---|---|---|
      continue;
    }
    if (in_table && line.rfind("|", 0) != 0) in_table = false;
    if (in_table) rows += line + "\n";
  }
  REQUIRE_MESSAGE(seen, path << " has no \"| key | default | meaning |\" table");
  return rows;
}

template <class Table>
void check_readme(const std::string& plugin, const Table& table) {
  CHECK(table.plugin() == plugin);
  const std::string want = table.markdown_rows();
  const std::string have = readme_rows(plugin);
  CHECK_MESSAGE(have == want, "plugins/" << plugin << "/README.md key table differs from the declaration; "
                                         << "the declaration renders:\n"
                                         << want);
}

}  // namespace

TEST_CASE("ema README keys") { check_readme("ema", trainhook::ema::EmaOptions::table()); }
TEST_CASE("early_stopping README keys") {
  check_readme("early_stopping", trainhook::early_stopping::EarlyStoppingOptions::table());
}
TEST_CASE("progress README keys") { check_readme("progress", trainhook::progress::ProgressOptions::table()); }
TEST_CASE("tensorboard README keys") {
  check_readme("tensorboard", trainhook::tensorboard::TensorBoardOptions::table());
}
TEST_CASE("mlflow README keys") { check_readme("mlflow", trainhook::mlflow::options_table()); }
TEST_CASE("wandb README keys") { check_readme("wandb", trainhook::wandb::options_table()); }
TEST_CASE("flyte README keys") { check_readme("flyte", trainhook::flyte::FlyteKeys::table()); }
TEST_CASE("nan_guard README keys") {
  check_readme("nan_guard", trainhook::nan_guard::NanGuardOptions::table());
}
TEST_CASE("grad_stats README keys") {
  check_readme("grad_stats", trainhook::grad_stats::GradStatsOptions::table());
}
TEST_CASE("throughput README keys") {
  check_readme("throughput", trainhook::throughput::ThroughputOptions::table());
}
TEST_CASE("system_stats README keys") {
  check_readme("system_stats", trainhook::system_stats::SystemStatsOptions::table());
}
TEST_CASE("reduce_lr_on_plateau README keys") {
  check_readme("reduce_lr_on_plateau", trainhook::reduce_lr_on_plateau::ReduceLrOnPlateauOptions::table());
}
TEST_CASE("csv and jsonl README keys") {
  using trainhook::support::LogHistoryFileOptions;
  check_readme("csv", LogHistoryFileOptions::table("csv", "log_history.csv"));
  check_readme("jsonl", LogHistoryFileOptions::table("jsonl", "log_history.jsonl"));
}
#ifdef TRAINHOOK_HAVE_PROMETHEUS
TEST_CASE("prometheus README keys") {
  check_readme("prometheus", trainhook::prometheus::PrometheusOptions::table());
}
#endif
