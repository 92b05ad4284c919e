// Drives the real flyte plugin library (dlopen, C ABI) through a simulated run
// for the integration tests:
//   flyte_driver <plugin library> <output_dir> <config-json> <steps,comma-separated> <big-file-bytes>
//                [--fail MESSAGE]
// Fires on_init_end, then per step writes checkpoint-<step>/ (a few small files
// and one file of <big-file-bytes> bytes whose content depends on the step) and
// fires on_save, then on_train_end. Prints "RESUME <path>" when the plugin asked
// to resume, and every log line of the plugin to stderr. With --fail the run
// ends by EXCEPTION (kind error, MESSAGE) instead of on_train_end, after a
// checkpoint folder one step past the last was half written (never reported
// by on_save, as when a save is cut short by the error). Host and driver are the
// shared testkit (testkit/plugin_driver.hpp).
#include "test_files.hpp"

#include <plugin_driver.hpp>

#include <iostream>
#include <memory>
#include <sstream>

namespace {

// Fires one event; prints the failure and returns false when it fails.
bool fire(testkit::Instance& cb, testkit::Run& run, int32_t event, const char* name,
          const std::string& checkpoint_dir = {}) {
  try {
    if (event == TH_EVENT_SAVE)
      cb.save(run, checkpoint_dir);
    else
      cb.fire(event, run);
    return true;
  } catch (const testkit::CallError& e) {
    std::cerr << name << " failed: " << e.what() << "\n";
    return false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool failing = argc == 8 && std::string(argv[6]) == "--fail";
  if (argc != 6 && !failing) {
    std::cerr << "usage: flyte_driver <plugin library> <output_dir> <config-json> <steps> <big-bytes> "
                 "[--fail MESSAGE]\n";
    return 2;
  }
  std::unique_ptr<testkit::Library> lib;
  const th_callback_info* flyte = nullptr;
  try {
    lib = std::make_unique<testkit::Library>(argv[1]);
    flyte = &lib->callback("flyte");
  } catch (const std::exception& e) {
    std::cerr << "cannot load the flyte callback from " << argv[1] << ": " << e.what() << "\n";
    return 2;
  }
  testkit::FakeHost host;
  host.output_dir = argv[2];
  host.state_json = R"({"global_step": 3, "log_history": [{"loss": 2.0, "epoch": 1.0, "step": 1},
                        {"loss": 1.0, "epoch": 2.0, "step": 2}]})";
  host.echo_prefix = "flyte";
  std::unique_ptr<testkit::Instance> cb;
  try {
    cb = std::make_unique<testkit::Instance>(*flyte, host, argv[3]);
  } catch (const testkit::CallError& e) {
    std::cerr << "create failed: " << e.what() << "\n";
    return 3;
  }
  int rc = 0;
  testkit::Run run;
  if (!fire(*cb, run, TH_EVENT_INIT_END, "on_init_end")) rc = 4;
  if (!host.resume_checkpoint.empty()) std::cout << "RESUME " << host.resume_checkpoint << std::endl;
  std::stringstream steps(argv[4]);
  std::string step;
  const size_t big = std::stoull(argv[5]);
  while (rc == 0 && std::getline(steps, step, ',')) {
    if (step.empty()) continue;
    const int s = std::stoi(step);
    const auto dir = flyte_test::make_checkpoint(host.output_dir, s);
    std::string data(big, '\0');
    uint32_t x = 2463534242u + static_cast<uint32_t>(s);
    for (auto& c : data) {  // xorshift: incompressible, step-dependent bytes
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      c = static_cast<char>(x);
    }
    if (big > 0) flyte_test::write_file(dir / "big.bin", data);
    run.state.global_step = s;
    if (!fire(*cb, run, TH_EVENT_SAVE, "on_save", dir.string())) rc = 4;
  }
  if (failing) {
    const auto half =
        flyte_test::make_checkpoint(host.output_dir, static_cast<int>(run.state.global_step) + 1);
    std::filesystem::remove(half / "trainer_state.json");
    const th_failure f{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, argv[7], run.state.global_step};
    try {
      cb->fire_exception(run, f);
    } catch (const testkit::CallError& e) {
      std::cerr << "on_exception failed: " << e.what() << "\n";
      rc = 4;
    }
  } else if (!fire(*cb, run, TH_EVENT_TRAIN_END, "on_train_end")) {
    rc = 4;
  }
  return rc;
}
