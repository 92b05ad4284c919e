// The built plugin, loaded and driven through the C ABI by the shared testkit
// (plugin_harness.hpp over testkit/plugin_driver.hpp).
#include "event_reader.hpp"
#include "plugin_harness.hpp"

#include <doctest/doctest.h>
#include <temp_dir.hpp>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <regex>

namespace fs = std::filesystem;
using trainhook::testkit::TempDir;

namespace {

std::vector<fs::path> event_files(const fs::path& root) {
  std::vector<fs::path> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().filename().string().find("tfevents") != std::string::npos)
      out.push_back(e.path());
  return out;
}

struct EnvGuard {
  explicit EnvGuard(const char* name) : name_(name) { ::unsetenv(name); }
  ~EnvGuard() { ::unsetenv(name_); }
  const char* name_;
};

}  // namespace

TEST_CASE(
    "the library exports one 'tensorboard' integration that wants train begin, log, train end and "
    "exception") {
  tbtest::PluginHarness h;
  CHECK(h.info().kind == TH_KIND_INTEGRATION);
  // ... and on_pre_optimizer_step, for the ABI 1.1 histograms (a no-op unless configured).
  CHECK(h.info().event_mask ==
        (TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN) | TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_TRAIN_END) |
         TH_EVENT_BIT(TH_EVENT_PRE_OPTIMIZER_STEP) | TH_EVENT_BIT(TH_EVENT_EXCEPTION)));
}

TEST_CASE("observe-only: log always, pre-optimizer step unless histograms read the model there") {
  {
    tbtest::PluginHarness h;
    REQUIRE(h.create("{}") == TH_OK);
    CHECK(h.host().observe_only == (TH_EVENT_BIT(TH_EVENT_LOG) | TH_EVENT_BIT(TH_EVENT_PRE_OPTIMIZER_STEP)));
  }
  tbtest::PluginHarness h;
  REQUIRE(h.create(R"({"histograms": "weights"})") == TH_OK);
  CHECK(h.host().observe_only == TH_EVENT_BIT(TH_EVENT_LOG));
}

TEST_CASE("bad plugin_config is refused with the key named") {
  tbtest::PluginHarness h;
  std::string err;
  CHECK(h.create(R"({"logdir": "/x"})", &err) == TH_INVALID_ARGUMENT);
  CHECK(err.find("plugin_config tensorboard: unknown key 'logdir'") != std::string::npos);
  CHECK(err.find("logging_dir") != std::string::npos);
  CHECK(h.create(R"({"queue_size": 0})", &err) == TH_INVALID_ARGUMENT);
  CHECK(err.find("tensorboard.queue_size") != std::string::npos);
  CHECK(h.create(R"({"queue_size": "12x"})", &err) == TH_INVALID_ARGUMENT);
  CHECK(h.create(R"({"logging_dir": ""})", &err) == TH_INVALID_ARGUMENT);
  CHECK(err.find("tensorboard.logging_dir") != std::string::npos);
  CHECK(h.create(R"({"flush_secs": 5})", &err) == TH_INVALID_ARGUMENT);
  CHECK(err.find("tensorboard.flush_secs") != std::string::npos);
  CHECK(h.create(R"({"flush_secs": "x"})", &err) == TH_INVALID_ARGUMENT);
  CHECK(h.create(R"({"histograms": "weights,biases"})", &err) == TH_INVALID_ARGUMENT);
  CHECK(
      err.find(
          R"(plugin_config tensorboard.histograms: expected weights and/or gradients (e.g. weights,gradients), got "weights,biases")") !=
      std::string::npos);
  // Numbers as text are strict: "2x" was read as 2 before.
  CHECK(h.create(R"({"histogram_steps": "2x"})", &err) == TH_INVALID_ARGUMENT);
  CHECK(err.find(R"(plugin_config tensorboard.histogram_steps: expected an integer >= 1, got "2x")") !=
        std::string::npos);
  CHECK_MESSAGE(
      h.create(R"({"queue_size": "64", "logging_dir": "/tmp/x", "flush_secs": "0.5"})", &err) == TH_OK, err);
}

TEST_CASE("default folder output_dir/runs/<Mon><DD>_<HH>-<MM>-<SS>_<host> and the file name") {
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  const TempDir tmp("tb_plugin_default");
  const auto& dir = tmp.path;
  tbtest::PluginHarness h;
  h.host().output_dir = dir.string();
  h.host().args_json = R"({"learning_rate": 0.01, "output_dir": "x", "fp16": true})";
  REQUIRE(h.create("{}") == TH_OK);
  h.fire(TH_EVENT_TRAIN_BEGIN);
  h.state().global_step = 5;
  h.fire(TH_EVENT_LOG, {{"loss", 0.5}, {"eval_loss", 0.25}}, {{"note", "hi"}});
  h.fire(TH_EVENT_TRAIN_END);
  const auto files = event_files(dir);
  REQUIRE(files.size() == 1);
  const fs::path file = files[0];
  CHECK(file.parent_path().parent_path() == dir / "runs");
  CHECK(std::regex_match(
      file.parent_path().filename().string(),
      std::regex("(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[0-3][0-9]_[0-2][0-9]-[0-5][0-9]-"
                 "[0-6][0-9]_.+")));
  CHECK(std::regex_match(file.filename().string(), std::regex("events\\.out\\.tfevents\\.[0-9]{10}\\..+\\." +
                                                              std::to_string(::getpid()) + "\\.[0-9]+")));
  const auto events = tbtest::read_events(file.string());
  REQUIRE(events.size() == 6);  // version, texts, session start, log, experiment, session end
  CHECK(events[0].file_version == "brain.Event:2");
  CHECK(events[1].values[0].tag == "args");
  CHECK(events[1].values[0].string_val[0].find("\"learning_rate\": 0.01") != std::string::npos);
  CHECK(events[2].values[0].tag == "_hparams_/session_start_info");
  CHECK(events[3].step == 5);
  REQUIRE(events[3].values.size() == 3);
  CHECK(events[3].values[0].tag == "train/loss");
  CHECK(events[3].values[1].tag == "eval/loss");
  CHECK(*events[3].values[1].simple_value == 0.25f);
  CHECK(events[3].values[2].tag == "train/note");
  CHECK(events[3].values[2].string_val[0] == "hi");
  CHECK(events[4].values[0].tag == "_hparams_/experiment");
  CHECK(events[5].values[0].tag == "_hparams_/session_end_info");
  CHECK(h.host().has(TH_LOG_INFO, "TensorBoard run " + file.string() +
                                      " FINISHED: 5 events (2 scalars) delivered, 0 spooled"));
}

TEST_CASE("TENSORBOARD_LOGGING_DIR is used, and plugin_config logging_dir overrides it") {
  const TempDir tmp("tb_plugin_env");
  const auto& dir = tmp.path;
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  ::setenv("TENSORBOARD_LOGGING_DIR", (dir / "from_env").c_str(), 1);
  {
    tbtest::PluginHarness h;
    h.host().output_dir = (dir / "out").string();
    REQUIRE(h.create("{}") == TH_OK);
    h.fire(TH_EVENT_TRAIN_BEGIN);
    h.fire(TH_EVENT_TRAIN_END);
  }
  CHECK(event_files(dir / "from_env").size() == 1);
  CHECK(event_files(dir / "out").empty());
  {
    tbtest::PluginHarness h;
    h.host().output_dir = (dir / "out").string();
    REQUIRE(h.create(R"({"logging_dir": ")" + (dir / "from_config").string() + R"("})") == TH_OK);
    h.fire(TH_EVENT_TRAIN_BEGIN);
    h.fire(TH_EVENT_TRAIN_END);
  }
  CHECK(event_files(dir / "from_config").size() == 1);
  CHECK(event_files(dir / "from_env").size() == 1);
}

TEST_CASE("only the world-zero process writes") {
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  const TempDir tmp("tb_plugin_rank1");
  const auto& dir = tmp.path;
  tbtest::PluginHarness h;
  h.host().output_dir = dir.string();
  REQUIRE(h.create("{}") == TH_OK);
  h.state().is_world_process_zero = 0;
  h.state().process_index = 1;
  h.fire(TH_EVENT_TRAIN_BEGIN);
  h.fire(TH_EVENT_LOG, {{"loss", 1.0}});
  h.fire(TH_EVENT_TRAIN_END);
  CHECK(event_files(dir).empty());
}

TEST_CASE(
    "on_log before train begin opens the file, and destroying without train end closes the session as "
    "failed") {
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  const TempDir tmp("tb_plugin_lazy");
  const auto& dir = tmp.path;
  tbtest::PluginHarness h;
  h.host().output_dir = dir.string();
  REQUIRE(h.create("{}") == TH_OK);
  h.fire(TH_EVENT_LOG, {{"loss", 1.0}});
  h.fire(TH_EVENT_TRAIN_BEGIN);
  h.fire(TH_EVENT_LOG, {{"loss", 0.5}});
  h.destroy();
  const auto files = event_files(dir);
  REQUIRE(files.size() == 1);
  const auto events = tbtest::read_events(files[0].string());
  REQUIRE(events.size() == 7);
  CHECK(events[1].values[0].tag == "train/loss");
  CHECK(events[6].values[0].tag == "_hparams_/session_end_info");
  // SessionEndInfo.status = STATUS_FAILURE (2): HParamsPluginData field 4 { field 1 = 2 }
  const auto data = tbtest::decode_message(events[6].values[0].plugin_content);
  CHECK(tbtest::decode_message(data[0].bytes)[0].varint == 2);
}

TEST_CASE("EXCEPTION writes the failure text and a failed session then flushes and closes the file") {
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  const TempDir tmp("tb_plugin_exception");
  const auto& dir = tmp.path;
  tbtest::PluginHarness h;
  h.host().output_dir = dir.string();
  REQUIRE(h.create("{}") == TH_OK);
  h.fire(TH_EVENT_TRAIN_BEGIN);
  h.state().global_step = 7;
  h.fire(TH_EVENT_LOG, {{"loss", 0.5}});
  h.fail("loss is NaN\nat layer 3");
  // Closed by the event itself, before the callback goes: the file is complete now.
  const auto files = event_files(dir);
  REQUIRE(files.size() == 1);
  const auto events = tbtest::read_events(files[0].string());
  REQUIRE(events.size() == 7);  // version, texts, session start, log, failure, experiment, session end
  CHECK(events[4].step == 7);
  REQUIRE(events[4].values.size() == 1);
  CHECK(events[4].values[0].tag == "trainhook/failure");
  CHECK(events[4].values[0].string_val[0] == "error at step 7: loss is NaN\nat layer 3");
  CHECK(events[6].values[0].tag == "_hparams_/session_end_info");
  const auto data = tbtest::decode_message(events[6].values[0].plugin_content);
  CHECK(tbtest::decode_message(data[0].bytes)[0].varint == 2);  // STATUS_FAILURE
  CHECK_MESSAGE(
      h.host().has(TH_LOG_WARN, "TensorBoard run " + files[0].string() +
                                    " FAILED (error at step 7: loss is NaN ...): 6 events (1 scalars) "
                                    "delivered, 0 spooled"),
      h.host().all_logs());
  // Nothing more is written when the callback goes.
  h.destroy();
  CHECK(tbtest::read_events(files[0].string()).size() == 7);
}

TEST_CASE("the final evaluate after train end gets a second file that ends as finished") {
  EnvGuard env("TENSORBOARD_LOGGING_DIR");
  const TempDir tmp("tb_plugin_eval_after");
  const auto& dir = tmp.path;
  tbtest::PluginHarness h;
  h.host().output_dir = dir.string();
  REQUIRE(h.create("{}") == TH_OK);
  h.fire(TH_EVENT_TRAIN_BEGIN);
  h.state().global_step = 3;
  h.fire(TH_EVENT_LOG, {{"loss", 0.5}});
  h.fire(TH_EVENT_TRAIN_END);
  h.fire(TH_EVENT_LOG, {{"eval_loss", 0.25}});
  h.destroy();
  const auto files = event_files(dir);
  REQUIRE(files.size() == 2);
  INFO(h.host().all_logs());
  CHECK(h.host().count_logs(TH_LOG_INFO, " FINISHED: ") == 2);
  CHECK_FALSE(h.host().logged("FAILED"));
}

TEST_CASE("a log folder that cannot be created is an error naming it") {
  tbtest::PluginHarness h;
  REQUIRE(h.create(R"({"logging_dir": "/proc/no/such/dir"})") == TH_OK);
  CHECK_THROWS_WITH_AS(h.fire(TH_EVENT_TRAIN_BEGIN), doctest::Contains("/proc/no/such/dir"),
                       std::runtime_error);
}
