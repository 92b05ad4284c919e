// Integration driver: loads the built tensorboard plugin through the C ABI,
// plays a small training run (train begin, training logs every step, eval
// logs every 10 steps, a string log, the final summary, train end) and writes
// what it logged to <out>/expected.json for check_events.py to compare with
// what TensorBoard's own reader finds.
//
//   tb_driver <output_dir> <tensorboard plugin library> [--fail MESSAGE]
//
// --fail: the run ends with EXCEPTION (kind error, MESSAGE) instead of train
// end; expected.json then holds the failure text the file must carry.
#include "plugin_harness.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  const bool failing = argc == 5 && std::string(argv[3]) == "--fail";
  if (argc != 3 && !failing) {
    std::cerr << "usage: tb_driver <output_dir> <tensorboard plugin library> [--fail MESSAGE]\n";
    return 2;
  }
  try {
    const std::string out = argv[1];
    tbtest::PluginHarness h(argv[2]);
    nlohmann::json args = {{"output_dir", out},
                           {"learning_rate", 3e-4},
                           {"num_train_epochs", 2.0},
                           {"per_device_train_batch_size", 8},
                           {"fp16", false},
                           {"report_to", {"tensorboard"}},
                           {"lr_scheduler_type", "linear"},
                           {"seed", 42}};
    h.host().output_dir = out;
    h.host().args_json = args.dump();
    h.host().model_description = "MLP(in=16, hidden=[32, 32], out=4)";
    if (h.create("{}") != TH_OK) throw std::runtime_error("create failed");

    nlohmann::json scalars = nlohmann::json::array();
    nlohmann::json texts = nlohmann::json::array();
    auto log = [&](int64_t step, const std::vector<std::pair<std::string, double>>& numbers,
                   const std::vector<std::pair<std::string, std::string>>& strings) {
      h.state().global_step = step;
      h.fire(TH_EVENT_LOG, numbers, strings);
      for (const auto& [k, v] : numbers) scalars.push_back({{"key", k}, {"step", step}, {"value", v}});
      for (const auto& [k, v] : strings) texts.push_back({{"key", k}, {"step", step}, {"value", v}});
    };

    h.fire(TH_EVENT_TRAIN_BEGIN);
    const int steps = 60;
    for (int step = 1; step <= steps; ++step) {
      // Values with many significant digits, so float32 rounding matters.
      const double loss = 2.0 * std::exp(-step / 20.0) + 0.0123456789 * std::sin(step);
      log(step,
          {{"loss", loss},
           {"grad_norm", 1.0 / std::sqrt(step + 0.5)},
           {"learning_rate", 3e-4 * (1.0 - step / double(steps + 1))},
           {"epoch", step / 30.0}},
          {});
      if (step % 10 == 0)
        log(step,
            {{"eval_loss", loss * 1.1},
             {"eval_accuracy", 1.0 - loss / 3},
             {"eval_runtime", 0.125 * step},
             {"epoch", step / 30.0}},
            {});
      if (step == 25) log(step, {}, {{"phase", "warmup done — ünïcode"}});
    }
    log(steps,
        {{"train_runtime", 12.5},
         {"train_samples_per_second", 480.25},
         {"train_loss", 0.98765},
         {"total_flos", 1.5e12},
         {"epoch", 2.0}},
        {});
    std::string failure;
    if (failing) {
      h.fail(argv[4]);
      failure = "error at step " + std::to_string(steps) + ": " + argv[4];
    } else {
      h.fire(TH_EVENT_TRAIN_END);
    }
    h.destroy();

    nlohmann::json expected = {
        {"scalars", scalars}, {"texts", texts}, {"args", args}, {"model_config", h.host().model_description}};
    if (failing) expected["failure"] = {{"step", steps}, {"text", failure}};
    std::ofstream(out + "/expected.json") << expected.dump(2) << "\n";
    for (const auto& [level, msg] : h.host().logs) std::cerr << "[plugin " << level << "] " << msg << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "tb_driver: " << e.what() << "\n";
    return 1;
  }
}
