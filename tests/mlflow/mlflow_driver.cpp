// A stand-in trainer for the mlflow plugin's integration tests and benchmark:
// loads a plugin library through the C ABI only, with the shared testkit
// (testkit/plugin_driver.hpp: dlopen, a fake th_host whose log goes to stderr),
// creates one callback, and fires a training run's events (HF order) with a
// simulated step time. Prints a JSON summary of the callback overhead per step
// on stdout.
//
//   mlflow_driver --plugin <plugin library> --callback mlflow --output_dir D --steps 50
//                 [--step_ms 5] [--save_every 10] [--eval_every 10] [--config JSON]
//                 [--args JSON] [--first_step N] [--no_train_end] [--no_plugin]
#include <plugin_driver.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string plugin, callback = "mlflow", output_dir = "driver_out", config = "{}", args,
                      run_name = "driver-run";
  int steps = 20, first_step = 1, step_ms = 0, save_every = 0, eval_every = 0;
  bool train_end = true, no_plugin = false;
};

void busy_wait(int ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
  }
}

int fail(const std::string& m) {
  std::cerr << "mlflow_driver: " << m << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + a);
      return argv[++i];
    };
    try {
      if (a == "--plugin")
        o.plugin = next();
      else if (a == "--callback")
        o.callback = next();
      else if (a == "--output_dir")
        o.output_dir = next();
      else if (a == "--config")
        o.config = next();
      else if (a == "--args")
        o.args = next();
      else if (a == "--run_name")
        o.run_name = next();
      else if (a == "--steps")
        o.steps = std::stoi(next());
      else if (a == "--first_step")
        o.first_step = std::stoi(next());
      else if (a == "--step_ms")
        o.step_ms = std::stoi(next());
      else if (a == "--save_every")
        o.save_every = std::stoi(next());
      else if (a == "--eval_every")
        o.eval_every = std::stoi(next());
      else if (a == "--no_train_end")
        o.train_end = false;
      else if (a == "--no_plugin")
        o.no_plugin = true;
      else
        return fail("unknown flag " + a);
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }
  testkit::FakeHost host;
  host.echo_prefix = "mlflow";
  host.resume_error = "not supported by the driver";
  host.output_dir = o.output_dir;
  host.run_name = o.run_name;
  host.args_json =
      !o.args.empty() ? o.args
                      : R"({"output_dir": ")" + o.output_dir + R"(", "learning_rate": 0.001, "max_steps": )" +
                            std::to_string(o.steps) + R"(, "seed": 42, "report_to": ["mlflow"]})";
  std::filesystem::create_directories(o.output_dir);

  std::unique_ptr<testkit::Library> lib;
  std::unique_ptr<testkit::Instance> cb;
  if (!o.no_plugin) {
    try {
      lib = std::make_unique<testkit::Library>(o.plugin);
      const th_callback_info& info = lib->callback(o.callback);
      try {
        cb = std::make_unique<testkit::Instance>(info, host, o.config);
      } catch (const testkit::CallError& e) {
        std::cerr << "create failed: " << e.what() << "\n";
        return 3;
      }
    } catch (const std::exception& e) {
      return fail(e.what());
    }
  }

  testkit::Run run;
  th_state& st = run.state;
  st.max_steps = o.steps;
  std::vector<double> callback_us;
  auto fire = [&](int32_t ev, const th_values* values = nullptr, const char* ckpt = nullptr) {
    if (cb == nullptr) return;
    try {
      cb->fire(ev, run, values, -1, -1, 0, ckpt);
    } catch (const testkit::CallError& e) {
      std::cerr << "event " << ev << " failed: " << e.what() << "\n";
      std::exit(4);
    }
  };

  fire(TH_EVENT_INIT_END);
  fire(TH_EVENT_TRAIN_BEGIN);
  std::vector<double> step_ms;
  for (int s = o.first_step; s < o.first_step + o.steps; ++s) {
    auto t0 = std::chrono::steady_clock::now();
    busy_wait(o.step_ms);  // the "compute" of one optimizer step
    auto c0 = std::chrono::steady_clock::now();
    st.global_step = s;
    st.epoch = s / 10.0;
    fire(TH_EVENT_STEP_END);
    // Values derived from the step so tests can check every one of them.
    const char* keys[] = {"loss", "learning_rate", "grad_norm", "epoch"};
    double vals[] = {1.0 / s, 0.001 * (o.steps - s + 1) / o.steps, 0.5 + s, st.epoch};
    const char* skeys[] = {"note"};
    const char* svals[] = {"text values are not metrics"};
    th_values v{TH_VALUES_STRUCT_SIZE, 4, keys, vals, 1, skeys, svals};
    fire(TH_EVENT_LOG, &v);
    if (o.eval_every > 0 && s % o.eval_every == 0) {
      const char* ek[] = {"eval_loss", "eval_accuracy"};
      double ev[] = {2.0 / s, s / 100.0};
      th_values em{TH_VALUES_STRUCT_SIZE, 2, ek, ev, 0, nullptr, nullptr};
      fire(TH_EVENT_LOG, &em);
      fire(TH_EVENT_EVALUATE, &em);
    }
    if (o.save_every > 0 && s % o.save_every == 0) {
      auto dir = std::filesystem::path(o.output_dir) / ("checkpoint-" + std::to_string(s));
      std::filesystem::create_directories(dir / "sub");
      std::ofstream(dir / "model.bin", std::ios::binary)
          << std::string(4096 + s, static_cast<char>('a' + s % 26));
      std::ofstream(dir / "trainer_state.json") << "{\"global_step\": " << s << "}\n";
      std::ofstream(dir / "sub" / "extra.txt") << "step " << s << "\n";
      fire(TH_EVENT_SAVE, nullptr, dir.string().c_str());
    }
    auto t1 = std::chrono::steady_clock::now();
    callback_us.push_back(std::chrono::duration<double, std::micro>(t1 - c0).count());
    step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  auto end0 = std::chrono::steady_clock::now();
  if (o.train_end) fire(TH_EVENT_TRAIN_END);
  cb.reset();
  double end_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - end0).count();

  double total = 0, cb_total = 0, cb_max = 0;
  for (double x : step_ms) total += x;
  for (double x : callback_us) {
    cb_total += x;
    cb_max = std::max(cb_max, x);
  }
  std::cout << "{\"steps\": " << o.steps << ", \"mean_step_ms\": " << (o.steps ? total / o.steps : 0)
            << ", \"mean_callback_us\": " << (o.steps ? cb_total / o.steps : 0)
            << ", \"max_callback_us\": " << cb_max << ", \"train_end_ms\": " << end_ms << "}" << std::endl;
  return 0;
}
