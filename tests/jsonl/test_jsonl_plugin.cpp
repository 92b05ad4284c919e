// The jsonl logger through the C ABI (testkit): one JSON object per on_log,
// with log_history's keys (step, epoch, integers as integers, the shortest
// round-trip numbers); the file equals the state's log_history at train begin
// (fresh run: emptied; resumed: the checkpoint's entries); the final
// evaluate()'s log is appended; bad configuration and unwritable files are
// reported naming the key or the file.
#include <plugin_driver.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <temp_dir.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using testkit::FakeHost;
using testkit::Instance;
using testkit::Library;
using testkit::Run;
using testkit::Values;
using trainhook::testkit::TempDir;

namespace {

Library& library() {
  static Library lib(testkit::plugin_path("jsonl"));
  return lib;
}
const th_callback_info& info() { return library().callback("jsonl"); }

std::vector<nlohmann::json> read_lines(const fs::path& f) {
  std::ifstream in(f);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

void log(Instance& cb, Run& run, int64_t step, double epoch, Values v) {
  run.state.global_step = step;
  run.state.epoch = epoch;
  v.add("epoch", epoch);
  cb.fire(TH_EVENT_LOG, run, v.view());
}

}  // namespace

TEST_CASE("jsonl writes log_history entries with step and epoch") {
  FakeHost host;
  const TempDir tmp("th_jsonl_basic");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  std::ofstream(dir / "log_history.jsonl") << "{\"stale\": 1}\n";  // a previous run's file
  Run run;
  {
    Instance cb(info(), host, "{}");
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 0.5, Values{{"loss", 0.1}, {"learning_rate", 1.0 / 3.0}, {"grad_norm", NAN}});
    log(cb, run, 2, 1.0, Values{{"eval_loss", 2.5e-300}, {"num_input_tokens_seen", 64}});
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  const auto lines = read_lines(dir / "log_history.jsonl");
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["step"] == 1);
  CHECK(lines[0]["step"].is_number_integer());
  CHECK(lines[0]["epoch"].get<double>() == 0.5);
  CHECK(lines[0]["loss"].get<double>() == 0.1);
  CHECK(lines[0]["learning_rate"].get<double>() == 1.0 / 3.0);  // round trip
  CHECK(lines[0]["grad_norm"].is_null());                       // NaN, as trainer_state.json writes it
  CHECK(lines[1]["eval_loss"].get<double>() == 2.5e-300);
  CHECK(lines[1]["num_input_tokens_seen"].is_number_integer());
  CHECK(lines[1]["step"] == 2);
  CHECK(host.logged("2 log records in"));
}

TEST_CASE("jsonl on a resumed run keeps the checkpoint's log_history and drops later lines") {
  FakeHost host;
  const TempDir tmp("th_jsonl_resume");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  // The killed run wrote steps 1 to 3; its checkpoint was at step 2.
  std::ofstream(dir / "log_history.jsonl") << "{\"loss\":1.0,\"step\":1}\n{\"loss\":0.9,\"step\":2}\n"
                                           << "{\"loss\":0.8,\"step\":3}\n{\"loss\":0.7,\"st";
  host.state_json = R"({"global_step": 2, "log_history": [{"epoch": 0.1, "loss": 1.0, "step": 1},
                        {"epoch": 0.2, "loss": 0.9, "step": 2}]})";
  Run run;
  {
    Instance cb(info(), host, "{}");
    run.state.global_step = 2;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 3, 0.3, Values{{"loss", 0.75}});
    cb.fire(TH_EVENT_TRAIN_END, run);
    // The final evaluate() logs after train end: appended to the same file.
    log(cb, run, 3, 0.3, Values{{"eval_loss", 0.5}});
  }
  const auto lines = read_lines(dir / "log_history.jsonl");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == nlohmann::json::parse(R"({"epoch": 0.1, "loss": 1.0, "step": 1})"));
  CHECK(lines[1]["step"] == 2);
  CHECK(lines[2]["loss"].get<double>() == 0.75);
  CHECK(lines[3]["eval_loss"].get<double>() == 0.5);
}

TEST_CASE("jsonl file key takes a relative or absolute name") {
  FakeHost host;
  const TempDir tmp("th_jsonl_file");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  Run run;
  {
    Instance cb(info(), host, R"({"file": "logs/h.jsonl"})");
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 1.0, Values{{"loss", 1.5}});
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  CHECK(read_lines(dir / "logs" / "h.jsonl").size() == 1);
  const fs::path abs = dir / "abs.jsonl";
  {
    Instance cb(info(), host, nlohmann::json{{"file", abs.string()}}.dump());
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 1.0, Values{{"loss", 1.5}});
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  CHECK(read_lines(abs).size() == 1);
}

TEST_CASE("jsonl configuration errors name the key") {
  FakeHost host;
  auto err = [&](const std::string& cfg) {
    return std::string(testkit::create_error(info(), host, cfg).what());
  };
  CHECK(err(R"({"fil": "x"})").find("plugin_config jsonl: unknown key 'fil' (did you mean 'file'?)") !=
        std::string::npos);
  CHECK(err(R"({"queue_size": "12x"})")
            .find("plugin_config jsonl.queue_size: expected an integer in [1, 10000000]") !=
        std::string::npos);
  CHECK(err(R"({"file": ""})").find("plugin_config jsonl.file") != std::string::npos);
  CHECK(err(R"({"queue_size": 0})").find("plugin_config jsonl.queue_size") != std::string::npos);
  CHECK(err(R"({"queue_size": "12"})").empty());
}

TEST_CASE("jsonl reports the records it could not write naming the file") {
  if (::geteuid() == 0) return;  // root writes anywhere
  FakeHost host;
  const TempDir tmp("th_jsonl_unwritable");
  const fs::path& dir = tmp.path;
  fs::create_directories(dir / "ro");
  fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  host.output_dir = (dir / "ro").string();
  Run run;
  {
    Instance cb(info(), host, "{}");
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    log(cb, run, 1, 1.0, Values{{"loss", 1.5}});
    log(cb, run, 2, 1.0, Values{{"loss", 1.4}});
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  const std::string file = (dir / "ro" / "log_history.jsonl").string();
  CHECK_MESSAGE(host.count_logs(TH_LOG_WARN, "2 log records are not in " + file) == 1, host.all_logs());
  CHECK(host.count_logs(TH_LOG_ERROR, file) >= 1);
  CHECK(host.count_logs(TH_LOG_WARN, "was not replaced by the state's log_history") == 1);
}

TEST_CASE("jsonl lines logged before a checkpoint are in the file when on_save returns") {
  FakeHost host;
  const TempDir tmp("th_jsonl_save");
  const fs::path& dir = tmp.path;
  host.output_dir = dir.string();
  Run run;
  Instance cb(info(), host, "{}");
  cb.fire(TH_EVENT_TRAIN_BEGIN, run);
  for (int64_t step = 1; step <= 5; ++step)
    log(cb, run, step, 0.1 * static_cast<double>(step), Values{{"loss", 1.0}});
  cb.save(run, (dir / "checkpoint-5").string());
  // No wait: the writer comes by only every 0.1 s on its own, on_save flushed it.
  CHECK(read_lines(dir / "log_history.jsonl").size() == 5);
  cb.fire(TH_EVENT_TRAIN_END, run);
}
