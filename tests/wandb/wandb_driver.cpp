// Drives the built wandb plugin through the C ABI alone, as any host would:
// dlopen, the entry symbol, a th_host whose log goes to stderr, the
// callback's events, and the library's "wandb-sync" command. The Python
// scenarios (run_scenarios.py) run it against the test receiver.
//
//   wandb_driver train <plugin.so> <config-json> <output_dir> <log_count> [--no-end] [--eval-after-end]
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
//   wandb_driver sync <plugin.so> <args...>
//       runs `wandb-sync <args...>` and exits with its exit code.
#include <trainhook/abi.h>

#include <dlfcn.h>

#include <chrono>
#include <thread>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* kLevels[] = {"trace", "debug", "info", "warn", "error"};

th_host make_host(std::string* out_dir) {
  th_host h{};
  h.struct_size = TH_HOST_STRUCT_SIZE;
  h.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  h.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  h.ctx = out_dir;
  h.log = [](void*, int32_t level, const char* m) {
    std::fprintf(stderr, "[%s] %s\n", level >= 0 && level <= 4 ? kLevels[level] : "?", m);
  };
  h.output_dir = [](void* c) { return static_cast<std::string*>(c)->c_str(); };
  h.training_args_json = [](void*) {
    return R"({"output_dir":"out","learning_rate":0.001,"num_train_epochs":2,"hub_token":"do-not-send","report_to":["wandb"]})";
  };
  h.request_stop = [](void*, const char* reason) { std::fprintf(stderr, "[stop] %s\n", reason); };
  h.trainer_state_json = [](void*) { return "{}"; };
  h.model_description = [](void*) { return "tiny mlp"; };
  h.set_resume_checkpoint = [](void*, const char*, char* err, size_t n) -> th_status {
    std::snprintf(err, n, "not supported by the driver");
    return TH_INVALID_ARGUMENT;
  };
  h.run_name = [](void*) { return "driver-run"; };
  return h;
}

const th_plugin_info* load(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "driver: cannot load %s: %s\n", path, dlerror());
    std::exit(3);
  }
  auto entry = reinterpret_cast<th_plugin_entry_fn>(dlsym(lib, TRAINHOOK_ENTRY_SYMBOL));
  if (entry == nullptr) {
    std::fprintf(stderr, "driver: %s has no %s\n", path, TRAINHOOK_ENTRY_SYMBOL);
    std::exit(3);
  }
  th_host_info hi{TH_HOST_INFO_STRUCT_SIZE, TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR, "driver"};
  const th_plugin_info* info = nullptr;
  char err[512] = {0};
  if (entry(&hi, &info, err, sizeof err) != TH_OK) {
    std::fprintf(stderr, "driver: entry failed: %s\n", err);
    std::exit(3);
  }
  return info;
}

struct Fire {
  const th_callback_info* cb;
  void* self;
  th_state state{};
  th_control control{};

  void operator()(int32_t event, const std::vector<std::pair<std::string, double>>& values = {}) {
    if ((cb->event_mask & TH_EVENT_BIT(event)) == 0) return;
    std::vector<const char*> keys;
    std::vector<double> nums;
    for (const auto& [k, v] : values) {
      keys.push_back(k.c_str());
      nums.push_back(v);
    }
    th_values tv{
        TH_VALUES_STRUCT_SIZE, static_cast<uint32_t>(keys.size()), keys.data(), nums.data(), 0, nullptr, nullptr};
    th_event_args a{};
    a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
    a.event = event;
    a.state = &state;
    a.control = &control;
    a.values = (event == TH_EVENT_LOG || event == TH_EVENT_PREDICT) ? &tv : nullptr;
    a.batch_index = -1;
    a.batch_count = -1;
    char err[1024] = {0};
    if (cb->vtable->on_event(self, &a, err, sizeof err) != TH_OK) {
      std::fprintf(stderr, "driver: event %d failed: %s\n", event, err);
      std::exit(4);
    }
  }
};

int train(const char* plugin, const char* config, std::string out_dir, int count, bool end,
          bool eval_after_end, int log_gap_ms) {
  const th_plugin_info* info = load(plugin);
  const th_callback_info* cb = nullptr;
  for (uint32_t i = 0; i < info->callback_count; ++i)
    if (std::strcmp(info->callbacks[i]->name, "wandb") == 0) cb = info->callbacks[i];
  if (cb == nullptr) {
    std::fprintf(stderr, "driver: no wandb callback\n");
    return 3;
  }
  th_host host = make_host(&out_dir);
  void* self = nullptr;
  char err[1024] = {0};
  if (cb->create(&host, config, &self, err, sizeof err) != TH_OK) {
    std::fprintf(stderr, "driver: create failed: %s\n", err);
    return 5;
  }
  Fire fire{cb, self};
  fire.state.struct_size = TH_STATE_STRUCT_SIZE;
  fire.state.is_world_process_zero = 1;
  fire.state.is_local_process_zero = 1;
  fire.state.max_steps = count;
  fire.state.world_size = 1;
  fire.control.struct_size = TH_CONTROL_STRUCT_SIZE;
  fire(TH_EVENT_TRAIN_BEGIN);
  for (int i = 1; i <= count; ++i) {
    fire.state.global_step = i;
    fire.state.epoch = i / 10.0;
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
  if (end) fire(TH_EVENT_TRAIN_END);
  if (eval_after_end) {
    fire(TH_EVENT_EVALUATE);
    fire(TH_EVENT_LOG, {{"eval_loss", 0.125}, {"eval_runtime", 0.5}, {"epoch", count / 10.0}});
  }
  cb->vtable->destroy(self);
  std::fprintf(stderr, "driver: end_to_exit_s=%.3f\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - end_called).count());
  return 0;
}

int sync(const char* plugin, int argc, char** argv) {
  const th_plugin_info* info = load(plugin);
  for (uint32_t i = 0; i < info->command_count; ++i) {
    if (std::strcmp(info->commands[i]->name, "wandb-sync") != 0) continue;
    std::string out_dir = ".";
    th_host host = make_host(&out_dir);
    int32_t code = 0;
    char err[2048] = {0};
    if (info->commands[i]->run(&host, argc, argv, &code, err, sizeof err) != TH_OK) {
      std::fprintf(stderr, "driver: wandb-sync failed: %s\n", err);
      return 2;
    }
    return code;
  }
  std::fprintf(stderr, "driver: no wandb-sync command\n");
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 6 && std::strcmp(argv[1], "train") == 0) {
    bool end = true, eval_after_end = false;
    int log_gap_ms = 0;
    for (int i = 6; i < argc; ++i) {
      if (std::strcmp(argv[i], "--no-end") == 0) {
        end = false;
      } else if (std::strcmp(argv[i], "--eval-after-end") == 0) {
        eval_after_end = true;
      } else if (std::strcmp(argv[i], "--log-gap-ms") == 0 && i + 1 < argc) {
        log_gap_ms = std::atoi(argv[++i]);
      } else {
        std::fprintf(stderr,
                     "driver: unknown flag '%s' (expected --no-end, --eval-after-end, --log-gap-ms N)\n",
                     argv[i]);
        return 2;
      }
    }
    return train(argv[2], argv[3], argv[4], std::atoi(argv[5]), end, eval_after_end, log_gap_ms);
  }
  if (argc >= 3 && std::strcmp(argv[1], "sync") == 0) return sync(argv[2], argc - 3, argv + 3);
  std::fprintf(stderr,
               "usage: wandb_driver train <plugin> <config> <out> <n> [--no-end] [--eval-after-end] "
               "[--log-gap-ms N] | "
               "sync <plugin> "
               "args...\n");
  return 2;
}
