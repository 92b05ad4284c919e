#include <doctest/doctest.h>
#include <trainhook/mlflow/mlflow_options.hpp>
#include <trainhook/mlflow/record.hpp>
#include <trainhook/mlflow/rest.hpp>
#include <trainhook/plugin.hpp>

#include <plugin_driver.hpp>

#include <cmath>
#include <cstdlib>

using namespace trainhook::mlflow;

namespace {
void clear_env() {
  for (const char* v :
       {"MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_RUN_ID", "MLFLOW_NESTED_RUN",
        "MLFLOW_PARENT_RUN_ID", "MLFLOW_TAGS", "MLFLOW_FLATTEN_PARAMS", "MLFLOW_MAX_LOG_PARAMS",
        "HF_MLFLOW_LOG_ARTIFACTS", "DISABLE_MLFLOW_INTEGRATION", "MLFLOW_TRACKING_TOKEN"})
    ::unsetenv(v);
}
}  // namespace

TEST_CASE("a missing tracking URI is an error naming MLFLOW_TRACKING_URI") {
  clear_env();
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"), doctest::Contains("MLFLOW_TRACKING_URI"), trainhook::ConfigError);
  ::setenv("DISABLE_MLFLOW_INTEGRATION", "TRUE", 1);
  CHECK(MlflowOptions::from_json("{}").disabled());  // disabled: nothing else is required
  clear_env();
}

TEST_CASE("environment variables and config keys with HF names") {
  clear_env();
  ::setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:5000/", 1);
  ::setenv("MLFLOW_EXPERIMENT_NAME", "exp", 1);
  ::setenv("MLFLOW_TAGS", R"({"team": "nlp", "n": 3})", 1);
  ::setenv("MLFLOW_FLATTEN_PARAMS", "yes", 1);
  ::setenv("MLFLOW_MAX_LOG_PARAMS", "12", 1);
  ::setenv("HF_MLFLOW_LOG_ARTIFACTS", "1", 1);
  ::setenv("MLFLOW_TRACKING_TOKEN", "tok", 1);
  MlflowOptions c = MlflowOptions::from_json(R"({"experiment_name": "from-config", "flush_timeout": 2.5})");
  CHECK(c.tracking_uri() == "http://127.0.0.1:5000");
  CHECK(c.experiment_name() == "from-config");
  CHECK(c.tags().at("team") == "nlp");
  CHECK(c.tags().at("n") == "3");
  CHECK(c.flatten_params());
  CHECK(c.max_log_params() == 12);
  CHECK(c.log_artifacts());
  CHECK(c.token() == "tok");
  CHECK(c.flush_timeout().count() == 2500);
  clear_env();
}

TEST_CASE("bad values are clear errors") {
  clear_env();
  ::setenv("MLFLOW_TRACKING_URI", "http://h", 1);
  ::setenv("MLFLOW_TAGS", "{not json", 1);
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"), doctest::Contains("MLFLOW_TAGS"), trainhook::ConfigError);
  ::setenv("MLFLOW_TAGS", "[1]", 1);
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"), doctest::Contains("JSON object"), trainhook::ConfigError);
  ::unsetenv("MLFLOW_TAGS");
  ::setenv("MLFLOW_MAX_LOG_PARAMS", "many", 1);
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"), doctest::Contains("MLFLOW_MAX_LOG_PARAMS"),
                       trainhook::ConfigError);
  ::unsetenv("MLFLOW_MAX_LOG_PARAMS");
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json(R"({"tracking_uri": "file:///tmp/mlruns"})"),
                       doctest::Contains("plugin_config mlflow.tracking_uri"), trainhook::ConfigError);
  // One rule for unknown keys: an error with a did-you-mean (a warning before).
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json(R"({"tracking_url": "http://h"})"),
                       doctest::Contains("plugin_config mlflow: unknown key 'tracking_url' (did you mean "
                                         "'tracking_uri'?)"),
                       trainhook::ConfigError);
  ::setenv("MLFLOW_MAX_LOG_PARAMS", "12x", 1);  // strict: not 12
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"),
                       doctest::Contains("environment variable MLFLOW_MAX_LOG_PARAMS (plugin_config "
                                         "mlflow.max_log_params): expected an integer >= 0, got '12x'"),
                       trainhook::ConfigError);
  ::unsetenv("MLFLOW_MAX_LOG_PARAMS");
  ::setenv("MLFLOW_NESTED_RUN", "1", 1);
  CHECK_THROWS_WITH_AS(MlflowOptions::from_json("{}"), doctest::Contains("MLFLOW_PARENT_RUN_ID"), trainhook::ConfigError);
  ::setenv("MLFLOW_RUN_ID", "parent123", 1);
  MlflowOptions nested = MlflowOptions::from_json("{}");
  CHECK(nested.parent_run_id() == "parent123");
  CHECK(nested.run_id().empty());
  clear_env();
}

TEST_CASE("records survive the spool format including non-finite values") {
  for (double v : {1.5, -0.0, 1e300, std::nan(""), HUGE_VAL, -HUGE_VAL}) {
    Record r = Record::metric("train/loss", v, 1700000000123, 42);
    auto back = from_line(to_line(r));
    REQUIRE(back.has_value());
    CHECK(back->key == "train/loss");
    CHECK(back->timestamp == 1700000000123);
    CHECK(back->step == 42);
    if (std::isnan(v))
      CHECK(std::isnan(back->value));
    else
      CHECK(back->value == v);
  }
  auto a = from_line(to_line(Record::artifact_dir("/x/checkpoint-5", 5)));
  REQUIRE(a.has_value());
  CHECK(a->kind == Record::Kind::artifact_dir);
  CHECK(a->key == "/x/checkpoint-5");
  auto e = from_line(to_line(Record::end_run("FINISHED", 99)));
  REQUIRE(e.has_value());
  CHECK(e->kind == Record::Kind::end_run);
  CHECK(e->timestamp == 99);
  CHECK_FALSE(from_line("garbage").has_value());
  CHECK_FALSE(from_line(R"({"t": 1})").has_value());
}

TEST_CASE("metric names are sanitised like HF and artifact URIs map to proxy paths") {
  CHECK(sanitize_metric_name("eval/acc@1 (top)") == "eval/acc_1 _top_");
  CHECK(artifact_proxy_path("mlflow-artifacts:/3/abc/artifacts").value() == "3/abc/artifacts");
  CHECK(artifact_proxy_path("mlflow-artifacts://h:5000/3/abc/artifacts/").value() == "3/abc/artifacts");
  CHECK_FALSE(artifact_proxy_path("s3://bucket/x").has_value());
  auto body = metrics_batch_body("r1", {Record::metric("m", std::nan(""), 5, 1)});
  CHECK(body["metrics"][0]["value"] == "NaN");
  CHECK(body["run_id"] == "r1");
}

TEST_CASE("the built plugin only observes on_save unless it uploads the checkpoint there (log_artifacts)") {
  clear_env();
  ::setenv("MLFLOW_TRACKING_URI", "http://127.0.0.1:9/", 1);  // never contacted: no train begin
  testkit::Library lib(testkit::plugin_path("mlflow"));
  const uint64_t logs = TH_EVENT_BIT(TH_EVENT_LOG);  // of the events it handles, as the class declares
  {
    testkit::FakeHost host;
    testkit::Instance cb(lib.callback("mlflow"), host, "{}");
    CHECK(host.observe_only == (logs | TH_EVENT_BIT(TH_EVENT_SAVE)));
  }
  testkit::FakeHost host;
  testkit::Instance cb(lib.callback("mlflow"), host, R"({"log_artifacts": true})");
  CHECK(host.observe_only == logs);
  clear_env();
}
