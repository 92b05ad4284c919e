// The csv logger through the C ABI (testkit): a header row then one row per
// on_log; a record with new keys widens the header (sorted new keys at the end,
// as Lightning's CSVLogger) with the earlier rows padded; reset at train begin
// to the state's log_history; the final evaluate()'s row appended with the
// header read back from the file. Python's csv module reads the result in the
// CLI test (tests/jsonl/cli_log_files.sh).
#include <trainhook/csv/csv_text.hpp>

#include <plugin_driver.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <temp_dir.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using testkit::FakeHost;
using testkit::Instance;
using testkit::Library;
using testkit::Run;
using testkit::Values;
using trainhook::testkit::read_file;
using trainhook::testkit::TempDir;

namespace {

Library& library() {
  static Library lib(testkit::plugin_path("csv"));
  return lib;
}
const th_callback_info& info() { return library().callback("csv"); }

void log(Instance& cb, Run& run, int64_t step, double epoch, Values v) {
  run.state.global_step = step;
  run.state.epoch = epoch;
  v.add("epoch", epoch);
  cb.fire(TH_EVENT_LOG, run, v.view());
}

}  // namespace

TEST_CASE("csv widens the header and pads the earlier rows") {
  FakeHost host;
  const TempDir tmp("th_csv_widen");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  Run run;
  {
    Instance cb(info(), host, "{}");
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 0.5, Values{{"loss", 0.25}, {"learning_rate", 0.1}});
    log(cb, run, 2, 1.0, Values{{"loss", 0.125}, {"learning_rate", 0.05}});
    log(cb, run, 2, 1.0, Values({{"eval_loss", 0.5}}, {{"note", "a,\"b\""}}));
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  CHECK(read_file(dir / "log_history.csv") ==
        "epoch,learning_rate,loss,step,eval_loss,note\n"
        "0.5,0.1,0.25,1,,\n"
        "1.0,0.05,0.125,2,,\n"
        "1.0,,,2,0.5,\"a,\"\"b\"\"\"\n");
}

TEST_CASE("csv on a resumed run holds the checkpoint's log_history") {
  FakeHost host;
  const TempDir tmp("th_csv_resume");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  std::ofstream(dir / "log_history.csv") << "epoch,loss,step\n0.1,1.0,1\n0.2,0.9,2\n0.3,0.8,3\n0.4,0.7";
  host.state_json = R"({"log_history": [{"epoch": 0.1, "loss": 1.0, "step": 1},
                                        {"epoch": 0.2, "eval_acc": 0.5, "step": 2}]})";
  Run run;
  {
    Instance cb(info(), host, "{}");
    run.state.global_step = 2;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 3, 0.3, Values{{"loss", 0.75}});
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  CHECK(read_file(dir / "log_history.csv") ==
        "epoch,loss,step,eval_acc\n"
        "0.1,1.0,1,\n"
        "0.2,,2,0.5\n"
        "0.3,0.75,3,\n");
}

TEST_CASE("csv after train end reads the header back and appends") {
  FakeHost host;
  const TempDir tmp("th_csv_reopen");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  Run run;
  {
    Instance cb(info(), host, "{}");
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 1.0, Values{{"loss", 0.5}});
    cb.fire(TH_EVENT_TRAIN_END, run);
    log(cb, run, 1, 1.0, Values{{"loss", 0.25}});       // same keys: appended
    log(cb, run, 1, 1.0, Values{{"eval_loss", 0.75}});  // a new key: widened
  }
  CHECK(read_file(dir / "log_history.csv") ==
        "epoch,loss,step,eval_loss\n"
        "1.0,0.5,1,\n"
        "1.0,0.25,1,\n"
        "1.0,,1,0.75\n");
}

TEST_CASE("csv configuration errors name the key") {
  FakeHost host;
  auto err = [&](const std::string& cfg) {
    return std::string(testkit::create_error(info(), host, cfg).what());
  };
  CHECK(err(R"({"file": {}})").find("plugin_config csv.file: expected a string, got {}") !=
        std::string::npos);
  CHECK(err(R"({"file": ""})").find("plugin_config csv.file: expected a file name") != std::string::npos);
  CHECK(err(R"({"queue": 3})")
            .find("plugin_config csv: unknown key 'queue' (did you mean 'queue_size'?); keys: file, "
                  "queue_size") != std::string::npos);
  CHECK(err("[1]").find("plugin_config csv: not a valid JSON object: expected a JSON object") !=
        std::string::npos);
}
