// wandb settings: env + plugin_config, defaults, validation messages.
#include <trainhook/wandb/wandb_options.hpp>

#include <trainhook/plugin.hpp>

#include <plugin_driver.hpp>

#include <doctest/doctest.h>

#include <cstdlib>

using namespace trainhook::wandb;

namespace {
// Clears the W&B variables for the test and again after it.
struct CleanEnv {
  static void clear() {
    for (const char* v : {"WANDB_MODE", "WANDB_API_KEY", "WANDB_BASE_URL", "WANDB_PROJECT", "WANDB_ENTITY",
                          "WANDB_RUN_ID", "WANDB_RESUME", "WANDB_DIR", "WANDB_LOG_MODEL", "WANDB_TAGS"})
      unsetenv(v);
  }
  CleanEnv() { clear(); }
  ~CleanEnv() { clear(); }
};
std::string error_of(const std::string& config) {
  try {
    WandbOptions::from_json(config, "/out");
  } catch (const trainhook::ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("defaults, and an online run needs a key") {
  CleanEnv env;
  CHECK(error_of("{}").find("WANDB_API_KEY is not set") != std::string::npos);
  setenv("WANDB_API_KEY", "k", 1);
  WandbOptions s = WandbOptions::from_json("{}", "/out");
  CHECK(s.mode() == Mode::online);
  CHECK(s.project() == "trainhook");
  CHECK(s.base_url() == "https://api.wandb.ai");
  CHECK(s.dir() == "/out");
  CHECK(s.resume() == Resume::none);
  CHECK(s.log_model() == LogModel::off);
  CHECK(s.backoff_initial() == std::chrono::milliseconds(2000));
  CHECK(s.backoff_max() == std::chrono::milliseconds(60000));
  CHECK(s.memory_records() == 500);
}

TEST_CASE("disabled needs no key and offline needs none either") {
  CleanEnv env;
  setenv("WANDB_MODE", "disabled", 1);
  CHECK(read_mode("{}") == Mode::disabled);
  setenv("WANDB_MODE", "offline", 1);
  CHECK(WandbOptions::from_json("{}", "/o").mode() == Mode::offline);
  setenv("WANDB_MODE", "dryrun", 1);
  CHECK(read_mode("{}") == Mode::offline);
  setenv("WANDB_MODE", "sometimes", 1);
  CHECK_THROWS_WITH_AS(
      read_mode("{}"),
      doctest::Contains("environment variable WANDB_MODE (plugin_config wandb.mode): expected one of online, "
                        "offline, disabled, run, dryrun, got 'sometimes'"),
      trainhook::ConfigError);
}

TEST_CASE("plugin_config wins over the environment and values are validated") {
  CleanEnv env;
  setenv("WANDB_API_KEY", "k", 1);
  setenv("WANDB_PROJECT", "from-env", 1);
  setenv("WANDB_RESUME", "must", 1);
  setenv("WANDB_TAGS", "a, b,,c", 1);
  WandbOptions s = WandbOptions::from_json(
      R"({"project":"from-config","base_url":"http://h:1/","backoff_initial":0.1,"backoff_max":0.5,
                 "log_model":"checkpoint","dir":"/d"})",
      "/out");
  CHECK(s.project() == "from-config");
  CHECK(s.base_url() == "http://h:1");
  CHECK(s.resume() == Resume::must);
  CHECK(s.log_model() == LogModel::checkpoint);
  CHECK(s.dir() == "/d");
  CHECK(s.tags() == std::vector<std::string>{"a", "b", "c"});
  CHECK(s.backoff_initial() == std::chrono::milliseconds(100));
  CHECK(s.backoff_max() == std::chrono::milliseconds(500));

  CHECK(error_of(R"({"resume":"maybe"})")
            .find("plugin_config wandb.resume: expected one of false, allow, must, "
                  "never, auto, true, got \"maybe\"") != std::string::npos);
  CHECK(error_of(R"({"log_model":"sometimes"})").find("false, end, checkpoint") != std::string::npos);
  CHECK(error_of(R"({"base_url":"ftp://x"})")
            .find("plugin_config wandb.base_url: expected an http:// or https://") != std::string::npos);
  CHECK(error_of(R"({"projcet":"x"})")
            .find("plugin_config wandb: unknown key 'projcet' (did you mean 'project'?)") !=
        std::string::npos);
  CHECK(error_of(R"({"run_id":"a/b"})").find("plugin_config wandb.run_id: expected only letters") !=
        std::string::npos);
  CHECK(error_of(R"({"backoff_initial":5,"backoff_max":1})").find("backoff_max: expected a number >=") !=
        std::string::npos);
  CHECK(error_of(R"({"transmit_interval":"soon"})")
            .find("plugin_config wandb.transmit_interval: expected a number") != std::string::npos);
  CHECK(error_of(R"({"memory_records":1})")
            .find("plugin_config wandb.memory_records: expected an integer >= 2") != std::string::npos);
  CHECK(WandbOptions::from_json(R"({"memory_records":64})", "/o").memory_records() == 64);
  setenv("WANDB_LOG_MODEL", "true", 1);  // HF: truthy means "end"
  CHECK(WandbOptions::from_json("{}", "/o").log_model() == LogModel::end);
}

TEST_CASE("the built plugin only observes on_save unless it uploads each checkpoint there (log_model)") {
  CleanEnv env;
  setenv("WANDB_API_KEY", "k", 1);
  setenv("WANDB_BASE_URL", "http://127.0.0.1:9", 1);  // never contacted: no train begin
  testkit::Library lib(testkit::plugin_path("wandb"));
  const uint64_t logs = TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_PREDICT);  // those it handles
  for (const char* config : {R"({})", R"({"log_model": "end"})", R"({"mode": "disabled"})"}) {
    testkit::FakeHost host;
    testkit::Instance cb(lib.callback("wandb"), host, config);
    CHECK_MESSAGE(host.observe_only == (logs | TH_EVENT_BIT(TH_EVENT_SAVE)), config);
  }
  testkit::FakeHost host;
  testkit::Instance cb(lib.callback("wandb"), host, R"({"log_model": "checkpoint"})");
  CHECK(host.observe_only == logs);
}
