#include <trainhook/tensorboard/log_dir.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <regex>

using namespace trainhook::tensorboard;

TEST_CASE("run_folder_name is <Mon><DD>_<HH>-<MM>-<SS>_<host> in local time") {
  setenv("TZ", "UTC", 1);
  tzset();
  CHECK(run_folder_name(1700000000, "node1") == "Nov14_22-13-20_node1");
  CHECK(run_folder_name(0, "h") == "Jan01_00-00-00_h");
}

TEST_CASE("event_file_name has the torch/TensorBoard shape") {
  CHECK(event_file_name(1700000000, "node1", 1234, 0) == "events.out.tfevents.1700000000.node1.1234.0");
  CHECK(event_file_name(5, "h", 1, 3) == "events.out.tfevents.0000000005.h.1.3");
}

TEST_CASE("resolve_log_dir: config, then environment, then output_dir/runs/<name>, trials in a subfolder") {
  setenv("TZ", "UTC", 1);
  tzset();
  LogDirInputs in;
  in.output_dir = "out";
  CHECK(resolve_log_dir(in, 1700000000, "h") == std::filesystem::path("out/runs/Nov14_22-13-20_h"));
  in.environment = "/env/tb";
  CHECK(resolve_log_dir(in, 1700000000, "h") == std::filesystem::path("/env/tb"));
  in.configured = "/cfg/tb";
  CHECK(resolve_log_dir(in, 1700000000, "h") == std::filesystem::path("/cfg/tb"));
  in.trial_name = "trial-3";
  CHECK(resolve_log_dir(in, 1700000000, "h") == std::filesystem::path("/cfg/tb/trial-3"));
}
