// The flyte callback through its C ABI (the same adapter the plugin library
// exports), against a local-folder destination.
#include "test_files.hpp"

#include <trainhook/flyte/deck.hpp>
#include <trainhook/flyte/flyte_callback.hpp>
#include <trainhook/flyte/manifest.hpp>

#include <doctest/doctest.h>
#include <plugin_driver.hpp>
#include <wait_until.hpp>

#include <cstdlib>
#include <set>
#include <thread>

using testkit::FakeHost;
using testkit::Instance;
using testkit::Run;
using trainhook::flyte::FlyteCallback;
using trainhook::flyte::kManifestName;
namespace fs = std::filesystem;

namespace {

const th_callback_info& info() {
  static const th_callback_info i =
      trainhook::callback<FlyteCallback>("flyte", "1.0.0", trainhook::Kind::integration, "test");
  return i;
}

void expect_same_tree(const fs::path& a, const fs::path& b) {
  size_t n = 0;
  for (auto& e : fs::recursive_directory_iterator(a)) {
    if (!e.is_regular_file()) continue;
    const auto rel = fs::relative(e.path(), a);
    INFO(rel.string());
    CHECK(flyte_test::read_file(b / rel) == flyte_test::read_file(e.path()));
    ++n;
  }
  CHECK(n > 0);
}

const char* kState = R"({"global_step": 2, "log_history": [{"loss": 1.5, "epoch": 1.0, "step": 1},
                         {"loss": 1.25, "epoch": 2.0, "step": 2}]})";

}  // namespace

TEST_CASE(
    "flyte callback: saves are uploaded with manifests, deck written and uploaded, a second attempt "
    "resumes") {
  flyte_test::TempDir tmp("th_flyte_flyte");
  const fs::path dest1 = tmp.path / "attempt1";
  {
    FakeHost host;
    host.output_dir = (tmp.path / "out1").string();
    host.state_json = kState;
    Instance cb(
        info(), host,
        "{\"checkpoint_path\": \"file://" + dest1.string() + "\", \"prev_checkpoint\": \"{{ .prev }}\"}");
    Run run;
    CHECK_NOTHROW(cb.fire(TH_EVENT_INIT_END, run));
    CHECK(host.resume_checkpoint.empty());
    for (int step : {1, 2}) {
      const auto dir = flyte_test::make_checkpoint(host.output_dir, step);
      run.state.global_step = step;
      CHECK_NOTHROW(cb.save(run, dir));
    }
    CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
    INFO(host.all_logs());
    CHECK(host.logged("uploaded to " + dest1.string() + ": checkpoint-1, checkpoint-2, log_history.html"));
    CHECK_FALSE(host.logged("not uploaded"));
    for (int step : {1, 2}) {
      const std::string name = "checkpoint-" + std::to_string(step);
      expect_same_tree(fs::path(host.output_dir) / name, dest1 / name);
      CHECK(fs::exists(dest1 / name / kManifestName));
    }
    const std::string deck = flyte_test::read_file(dest1 / "log_history.html");
    CHECK(deck == flyte_test::read_file(fs::path(host.output_dir) / "log_history.html"));
    CHECK(deck.find("<svg") != std::string::npos);
    CHECK(deck.find("test-run") != std::string::npos);
    CHECK_FALSE(fs::exists(fs::path(host.output_dir) / ".trainhook-upload-staging"));
  }
  // Attempt 2: restores checkpoint-2 from attempt 1 and carries it forward to its own prefix.
  const fs::path dest2 = tmp.path / "attempt2";
  FakeHost host;
  host.output_dir = (tmp.path / "out2").string();
  Instance cb(info(), host,
              "{\"checkpoint_path\": \"" + dest2.string() + "\", \"prev_checkpoint\": \"" + dest1.string() +
                  "\", \"deck\": false}");
  Run run;
  CHECK_NOTHROW(cb.fire(TH_EVENT_INIT_END, run));
  INFO(host.all_logs());
  CHECK(host.resume_checkpoint == (fs::path(host.output_dir) / "checkpoint-2").string());
  CHECK(host.logged("restored checkpoint-2 from " + dest1.string()));
  expect_same_tree(dest1 / "checkpoint-2", fs::path(host.output_dir) / "checkpoint-2");
  CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
  CHECK(host.logged("uploaded to " + dest2.string() + ": checkpoint-2"));
  expect_same_tree(dest1 / "checkpoint-2", dest2 / "checkpoint-2");
  CHECK_FALSE(fs::exists(fs::path(host.output_dir) / "log_history.html"));
}

TEST_CASE("flyte callback: a destination that fails for a while mid-upload loses nothing") {
  flyte_test::TempDir tmp("th_flyte_flyte_fail");
  const fs::path dest = tmp.path / "dest";
  FakeHost host;
  host.output_dir = (tmp.path / "out").string();
  Instance cb(info(), host, "{\"checkpoint_path\": \"" + dest.string() + "\", \"deck\": \"false\"}");
  Run run;
  // The destination is blocked (a file where its folder should be) until the
  // second checkpoint has been saved.
  flyte_test::write_file(dest, "blocked");
  const auto c1 = flyte_test::make_checkpoint(host.output_dir, 1);
  CHECK_NOTHROW(cb.save(run, c1));
  const auto c2 = flyte_test::make_checkpoint(host.output_dir, 2);
  CHECK_NOTHROW(cb.save(run, c2));
  // Unblock only once an upload has failed and is being retried.
  CHECK(testkit::wait_until([&] { return host.logged("retrying in"); }));
  fs::remove(dest);
  CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
  INFO(host.all_logs());
  CHECK(host.logged("retrying in"));
  CHECK(host.logged("uploaded to " + dest.string() + ": checkpoint-1, checkpoint-2"));
  expect_same_tree(c1, dest / "checkpoint-1");
  expect_same_tree(c2, dest / "checkpoint-2");
}

TEST_CASE("flyte callback: the run opens at train begin so a save only links into a spare folder") {
  flyte_test::TempDir tmp("th_flyte_spares");
  const fs::path dest = tmp.path / "dest";
  const fs::path staging = tmp.path / "out" / ".trainhook-upload-staging";
  FakeHost host;
  host.output_dir = (tmp.path / "out").string();
  Instance cb(info(), host, "{\"checkpoint_path\": \"" + dest.string() + "\", \"deck\": false}");
  Run run;
  CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_BEGIN, run));
  auto folders = [&] {
    std::set<fs::path> out;
    for (const auto& e : fs::directory_iterator(staging))
      if (e.is_directory()) out.insert(e.path());
    return out;
  };
  REQUIRE(fs::is_directory(staging));
  const std::set<fs::path> spares = folders();
  CHECK(spares.size() == 2);  // made before the loop, not in the first save
  for (int step : {1, 2, 3}) {
    run.state.global_step = step;
    CHECK_NOTHROW(cb.save(run, flyte_test::make_checkpoint(host.output_dir, step)));
    REQUIRE(testkit::wait_until([&] { return host.logged("uploaded checkpoint-" + std::to_string(step)); }));
  }
  // Every save used a spare; each came back emptied after its upload.
  CHECK(testkit::wait_until([&] { return folders() == spares; }));
  CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
  INFO(host.all_logs());
  CHECK(host.logged("uploaded to " + dest.string() + ": checkpoint-1, checkpoint-2, checkpoint-3"));
  for (int step : {1, 2, 3})
    expect_same_tree(fs::path(host.output_dir) / ("checkpoint-" + std::to_string(step)),
                     dest / ("checkpoint-" + std::to_string(step)));
  CHECK_FALSE(fs::exists(staging));
}

namespace {
void fire_failure(Instance& cb, Run& run, const char* message, int32_t kind = TH_FAILURE_ERROR) {
  const th_failure f{TH_FAILURE_STRUCT_SIZE, kind, message, run.state.global_step};
  cb.fire_exception(run, f);
}
}  // namespace

TEST_CASE("flyte callback: EXCEPTION uploads the last complete checkpoint again and not a half-written one") {
  flyte_test::TempDir tmp("th_flyte_exception");
  const fs::path dest = tmp.path / "dest";
  FakeHost host;
  host.output_dir = (tmp.path / "out").string();
  Instance cb(info(), host,
              "{\"checkpoint_path\": \"" + dest.string() + "\", \"deck\": false, \"retry_seconds\": 0}");
  Run run;
  // The destination is blocked (a file where its folder should be): both uploads fail for good.
  flyte_test::write_file(dest, "blocked");
  for (int step : {1, 2}) {
    run.state.global_step = step;
    CHECK_NOTHROW(cb.save(run, flyte_test::make_checkpoint(host.output_dir, step)));
  }
  REQUIRE(testkit::wait_until([&] { return host.logged("upload of checkpoint-2 failed"); }));
  // checkpoint-3 was being written when the error came: on_save never reported it.
  run.state.global_step = 3;
  flyte_test::make_checkpoint(host.output_dir, 3);
  fs::remove(dest);
  CHECK_NOTHROW(fire_failure(cb, run, "CUDA error: an illegal memory access"));
  INFO(host.all_logs());
  expect_same_tree(fs::path(host.output_dir) / "checkpoint-2", dest / "checkpoint-2");
  CHECK(fs::exists(dest / "checkpoint-2" / kManifestName));
  CHECK_FALSE(fs::exists(dest / "checkpoint-3"));
  CHECK_FALSE(fs::exists(dest / "checkpoint-1"));  // only the last complete one is retried
  CHECK(host.has(TH_LOG_WARN,
                 "flyte run " + dest.string() +
                     " FAILED (error at step 3: CUDA error: an illegal memory access): 1 uploads "
                     "delivered, 1 spooled in " +
                     host.output_dir +
                     "; send them later: no trainhook command uploads them later (the next "
                     "attempt restores only what reached " +
                     dest.string() +
                     "); the last complete checkpoint checkpoint-2 was queued again at the failure "
                     "and is uploaded"));
  // The run is over: train end does not follow, and destruction adds nothing.
}

TEST_CASE("flyte callback: EXCEPTION after the last checkpoint was uploaded says so") {
  flyte_test::TempDir tmp("th_flyte_exception_done");
  const fs::path dest = tmp.path / "dest";
  FakeHost host;
  host.output_dir = (tmp.path / "out").string();
  Instance cb(info(), host, "{\"checkpoint_path\": \"" + dest.string() + "\", \"deck\": false}");
  Run run;
  run.state.global_step = 4;
  CHECK_NOTHROW(cb.save(run, flyte_test::make_checkpoint(host.output_dir, 4)));
  REQUIRE(testkit::wait_until([&] { return host.logged("uploaded checkpoint-4"); }));
  run.state.global_step = 5;
  CHECK_NOTHROW(fire_failure(cb, run, "second signal", TH_FAILURE_SIGNAL));
  INFO(host.all_logs());
  // The job logs "uploaded" just before the queue marks it done, so at the
  // failure it may still read as uploading; either way it ends uploaded.
  const bool before =
      host.has(TH_LOG_WARN, "flyte run " + dest.string() +
                                " KILLED (signal at step 5: second signal): 1 uploads delivered, 0 "
                                "spooled; the last complete checkpoint checkpoint-4 was uploaded "
                                "before the failure and is uploaded");
  const bool during =
      host.has(TH_LOG_WARN, "flyte run " + dest.string() +
                                " KILLED (signal at step 5: second signal): 1 uploads delivered, 0 "
                                "spooled; the last complete checkpoint checkpoint-4 was "
                                "uploading at the failure and is uploaded");
  CHECK((before || during));
  CHECK_FALSE(host.logged("queued again"));
}

TEST_CASE("flyte callback: the end line at train end and after a first signal") {
  flyte_test::TempDir tmp("th_flyte_end_line");
  const fs::path dest = tmp.path / "dest";
  FakeHost host;
  host.output_dir = (tmp.path / "out").string();
  Instance cb(info(), host, "{\"checkpoint_path\": \"" + dest.string() + "\", \"deck\": false}");
  Run run;
  run.state.global_step = 1;
  CHECK_NOTHROW(cb.save(run, flyte_test::make_checkpoint(host.output_dir, 1)));
  host.stop_sig = 15;
  CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
  INFO(host.all_logs());
  CHECK(host.has(TH_LOG_WARN, "flyte run " + dest.string() +
                                  " KILLED (stopped by signal 15): 1 uploads delivered, 0 spooled"));
}

TEST_CASE("flyte callback: configuration errors name the key or variable") {
  FakeHost host;
  host.output_dir = "/tmp";
  const auto unknown = testkit::create_error(info(), host, "{\"checkpoint-path\": \"/x\"}");
  CHECK(unknown.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(unknown.what())
            .find("plugin_config flyte: unknown key 'checkpoint-path' (did you mean 'checkpoint_path'?)") !=
        std::string::npos);
  const auto part = testkit::create_error(info(), host, "{\"part_size\": 1000}");
  CHECK(part.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(part.what()).find("flyte.part_size") != std::string::npos);
  const auto scheme = testkit::create_error(info(), host, "{\"prev_checkpoint\": \"gs://b/p\"}");
  CHECK(std::string(scheme.what()).find("plugin_config flyte.prev_checkpoint") != std::string::npos);
  ::unsetenv("AWS_ACCESS_KEY_ID");
  const auto s3 = testkit::create_error(info(), host, "{\"checkpoint_path\": \"s3://bucket/p\"}");
  CHECK(s3.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(s3.what()).find("AWS_ACCESS_KEY_ID") != std::string::npos);
  const auto s3prev = testkit::create_error(
      info(), host, "{\"prev_checkpoint\": \"s3://bucket/p\"}");  // checked at creation, not at restore
  CHECK(s3prev.status == TH_INVALID_ARGUMENT);
  CHECK(std::string(s3prev.what()).find("AWS_ACCESS_KEY_ID") != std::string::npos);
}

TEST_CASE("flyte callback: locations from the environment, unset templates mean none") {
  flyte_test::TempDir tmp("th_flyte_flyte_env");
  ::setenv("TRAINHOOK_CHECKPOINT_DEST", (tmp.path / "env-dest").c_str(), 1);
  ::setenv("TRAINHOOK_PREV_CHECKPOINT", "\"\"", 1);
  {
    FakeHost host;
    host.output_dir = (tmp.path / "out").string();
    Instance cb(info(), host, "{}");
    Run run;
    const auto c = flyte_test::make_checkpoint(host.output_dir, 3);
    CHECK_NOTHROW(cb.save(run, c));
    CHECK_NOTHROW(cb.fire(TH_EVENT_TRAIN_END, run));
    CHECK(fs::exists(tmp.path / "env-dest" / "checkpoint-3" / kManifestName));
  }
  {
    FakeHost host;
    host.output_dir = (tmp.path / "out2").string();
    Instance cb(info(), host,
                "{\"checkpoint_path\": \"{{ .checkpointOutputPrefix }}\"}");  // config wins over the env
    CHECK(host.logged("checkpoints stay local"));
  }
  ::unsetenv("TRAINHOOK_CHECKPOINT_DEST");
  ::unsetenv("TRAINHOOK_PREV_CHECKPOINT");
}
