// Drives the built wandb plugin through the C ABI alone, as any host would,
// with the shared testkit (testkit/plugin_driver.hpp): dlopen, the entry
// symbol, a fake th_host whose log goes to stderr, the callback's events, and
// the library's "wandb-sync" command. The Python
// scenarios (run_scenarios.py) run it against the test receiver.
//
//   wandb_driver train <plugin library> <config-json> <output_dir> <log_count> [--no-end] [--eval-after-end]
//   [--log-gap-ms N]
//       train_begin, <log_count> training logs (an eval log every 4th),
//       the final train_* log, on_predict metrics, train_end (unless --no-end:
//       the callback is then destroyed without it, i.e. the run failed).
//       --eval-after-end: then on_evaluate + on_log {eval_loss 0.125,
//       eval_runtime 0.5, epoch}, as `trainhook train --do_eval` (HF's
//       evaluate()) fires them after training. Prints "driver: end_to_exit_s=X",
//       the seconds from the train_end call to the callback's destruction.
//       --log-gap-ms N: sleep N ms after each training log ("compute"), so
//       logs also arrive after the first request, within a transmit interval.
//   wandb_driver sync <plugin library> <args...>
//       runs `wandb-sync <args...>` and exits with its exit code.
#include <plugin_driver.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

// The host every run of the driver sees: logs and stop requests echoed to
// stderr ("[wandb] info: ...", "[wandb] stop requested: ..."), which the
// scenarios read.
void set_up(testkit::FakeHost& host, const std::string& out_dir) {
  host.echo_prefix = "wandb";
  host.output_dir = out_dir;
  host.args_json =
      R"({"output_dir":"out","learning_rate":0.001,"num_train_epochs":2,"hub_token":"do-not-send","report_to":["wandb"]})";
  host.model_description = "tiny mlp";
  host.run_name = "driver-run";
  host.resume_error = "not supported by the driver";
}

std::unique_ptr<testkit::Library> load(const char* path) {
  try {
    return std::make_unique<testkit::Library>(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: %s\n", e.what());
    std::exit(3);
  }
}

// How the driver's run ends besides the normal train end.
struct Ending {
  std::string failure;  // --fail MESSAGE: EXCEPTION (kind error) instead of train end
  int stop_signal = 0;  // --stop-signal N: a first signal stopped training (Host::stop_signal)
};

int train(const char* plugin, const char* config, const std::string& out_dir, int count, bool end,
          bool eval_after_end, int log_gap_ms, const Ending& ending) {
  const auto lib = load(plugin);
  const th_callback_info* info = nullptr;
  try {
    info = &lib->callback("wandb");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: %s\n", e.what());
    return 3;
  }
  testkit::FakeHost host;
  set_up(host, out_dir);
  host.stop_sig = ending.stop_signal;
  std::unique_ptr<testkit::Instance> cb;
  try {
    cb = std::make_unique<testkit::Instance>(*info, host, config);
  } catch (const testkit::CallError& e) {
    std::fprintf(stderr, "driver: create failed: %s\n", e.what());
    return 5;
  }
  testkit::Run run;
  run.state.max_steps = count;
  // Values are passed with the events that carry them (on_log, on_predict).
  auto fire = [&](int32_t event, const std::vector<std::pair<std::string, double>>& numbers = {}) {
    testkit::Values values(numbers);
    try {
      cb->fire(event, run, event == TH_EVENT_LOG || event == TH_EVENT_PREDICT ? values.view() : nullptr);
    } catch (const testkit::CallError& e) {
      std::fprintf(stderr, "driver: event %d failed: %s\n", event, e.what());
      std::exit(4);
    }
  };
  fire(TH_EVENT_TRAIN_BEGIN);
  for (int i = 1; i <= count; ++i) {
    run.state.global_step = i;
    run.state.epoch = i / 10.0;
    fire(TH_EVENT_LOG,
         {{"loss", 1.0 / i}, {"grad_norm", 0.5 + i}, {"learning_rate", 1e-3}, {"epoch", i / 10.0}});
    if (i % 4 == 0) fire(TH_EVENT_LOG, {{"eval_loss", 2.0 / i}, {"eval_runtime", 0.25}, {"epoch", i / 10.0}});
    if (log_gap_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(log_gap_ms));
  }
  fire(TH_EVENT_LOG, {{"train_runtime", 12.5},
                      {"train_samples_per_second", 80.0},
                      {"train_steps_per_second", 8.0},
                      {"total_flos", 12345.0},
                      {"train_loss", 0.25},
                      {"epoch", count / 10.0}});
  fire(TH_EVENT_PREDICT, {{"test_loss", 0.75}});
  const auto end_called = std::chrono::steady_clock::now();
  if (!ending.failure.empty()) {
    const th_failure f{TH_FAILURE_STRUCT_SIZE, TH_FAILURE_ERROR, ending.failure.c_str(),
                       run.state.global_step};
    try {
      cb->fire_exception(run, f);
    } catch (const testkit::CallError& e) {
      std::fprintf(stderr, "driver: EXCEPTION failed: %s\n", e.what());
      return 4;
    }
  } else if (end) {
    fire(TH_EVENT_TRAIN_END);
  }
  if (eval_after_end) {
    fire(TH_EVENT_EVALUATE);
    fire(TH_EVENT_LOG, {{"eval_loss", 0.125}, {"eval_runtime", 0.5}, {"epoch", count / 10.0}});
  }
  cb.reset();
  std::fprintf(stderr, "driver: end_to_exit_s=%.3f\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - end_called).count());
  return 0;
}

int sync(const char* plugin, int argc, char** argv) {
  const auto lib = load(plugin);
  testkit::FakeHost host;
  set_up(host, ".");
  try {
    return lib->run_command("wandb-sync", std::vector<std::string>(argv, argv + argc), host);
  } catch (const testkit::CallError& e) {
    std::fprintf(stderr, "driver: wandb-sync failed: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "driver: %s\n", e.what());
    return 3;
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::strcmp(argv[1], "train") == 0) {
    bool end = true, eval_after_end = false;
    int log_gap_ms = 0;
    Ending ending;
    for (int i = 6; i < argc; ++i) {
      if (std::strcmp(argv[i], "--no-end") == 0) {
        end = false;
      } else if (std::strcmp(argv[i], "--eval-after-end") == 0) {
        eval_after_end = true;
      } else if (std::strcmp(argv[i], "--log-gap-ms") == 0 && i + 1 < argc) {
        log_gap_ms = std::atoi(argv[++i]);
      } else if (std::strcmp(argv[i], "--fail") == 0 && i + 1 < argc) {
        ending.failure = argv[++i];
      } else if (std::strcmp(argv[i], "--stop-signal") == 0 && i + 1 < argc) {
        ending.stop_signal = std::atoi(argv[++i]);
      } else {
        std::fprintf(stderr,
                     "driver: unknown flag '%s' (expected --no-end, --eval-after-end, --log-gap-ms N, --fail "
                     "MESSAGE, --stop-signal N)\n",
                     argv[i]);
        return 2;
      }
    }
    return train(argv[2], argv[3], argv[4], std::atoi(argv[5]), end, eval_after_end, log_gap_ms, ending);
  }
  if (argc >= 3 && std::strcmp(argv[1], "sync") == 0) return sync(argv[2], argc - 3, argv + 3);
  std::fprintf(stderr,
               "usage: wandb_driver train <plugin> <config> <out> <n> [--no-end] [--eval-after-end] "
               "[--log-gap-ms N] [--fail MESSAGE] [--stop-signal N] | "
               "sync <plugin> "
               "args...\n");
  return 2;
}
