// A stand-in trainer for the mlflow plugin's integration tests and benchmark:
// loads a plugin library with dlopen through the C ABI only (abi.h), creates
// one callback, and fires a training run's events (HF order) with a simulated
// step time. Prints a JSON summary of the callback overhead per step on stdout.
//
//   mlflow_driver --plugin lib.so --callback mlflow --output_dir D --steps 50
//                 [--step_ms 5] [--save_every 10] [--eval_every 10] [--config JSON]
//                 [--args JSON] [--first_step N] [--no_train_end] [--no_plugin]
#include <trainhook/abi.h>

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string plugin, callback = "mlflow", output_dir = "driver_out", config = "{}", args,
                      run_name = "driver-run";
  int steps = 20, first_step = 1, step_ms = 0, save_every = 0, eval_every = 0;
  bool train_end = true, no_plugin = false;
};

std::mutex g_log_mu;
std::string g_output_dir, g_args_json, g_run_name;

void host_log(void*, int32_t level, const char* msg) {
  static const char* names[] = {"trace", "debug", "info", "warn", "error"};
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::fprintf(stderr, "[%s] mlflow: %s\n", names[std::clamp(level, 0, 4)], msg);
}
const char* host_output_dir(void*) { return g_output_dir.c_str(); }
const char* host_args(void*) { return g_args_json.c_str(); }
void host_stop(void*, const char* reason) {
  host_log(nullptr, TH_LOG_WARN, (std::string("stop: ") + reason).c_str());
}
const char* host_state(void*) { return "{}"; }
const char* host_model(void*) { return ""; }
th_status host_resume(void*, const char*, char* err, size_t n) {
  std::snprintf(err, n, "not supported by the driver");
  return TH_INVALID_ARGUMENT;
}
const char* host_run_name(void*) { return g_run_name.c_str(); }

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
  g_output_dir = o.output_dir;
  g_run_name = o.run_name;
  g_args_json = !o.args.empty()
                    ? o.args
                    : R"({"output_dir": ")" + o.output_dir + R"(", "learning_rate": 0.001, "max_steps": )" +
                          std::to_string(o.steps) + R"(, "seed": 42, "report_to": ["mlflow"]})";
  std::filesystem::create_directories(o.output_dir);

  void* self = nullptr;
  const th_callback_vtable* vt = nullptr;
  th_host host{};
  host.struct_size = TH_HOST_STRUCT_SIZE;
  host.abi_major = TRAINHOOK_ABI_VERSION_MAJOR;
  host.abi_minor = TRAINHOOK_ABI_VERSION_MINOR;
  host.log = host_log;
  host.output_dir = host_output_dir;
  host.training_args_json = host_args;
  host.request_stop = host_stop;
  host.trainer_state_json = host_state;
  host.model_description = host_model;
  host.set_resume_checkpoint = host_resume;
  host.run_name = host_run_name;
  char err[2048] = {0};
  if (!o.no_plugin) {
    void* lib = dlopen(o.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return fail(std::string("dlopen: ") + dlerror());
    auto entry = reinterpret_cast<th_plugin_entry_fn>(dlsym(lib, TRAINHOOK_ENTRY_SYMBOL));
    if (entry == nullptr) return fail("no entry symbol in " + o.plugin);
    th_host_info hi{TH_HOST_INFO_STRUCT_SIZE, TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR, "driver"};
    const th_plugin_info* info = nullptr;
    if (entry(&hi, &info, err, sizeof err) != TH_OK) return fail(err);
    const th_callback_info* cb = nullptr;
    for (uint32_t i = 0; i < info->callback_count; ++i)
      if (o.callback == info->callbacks[i]->name) cb = info->callbacks[i];
    if (cb == nullptr) return fail("no callback " + o.callback);
    if (cb->create(&host, o.config.c_str(), &self, err, sizeof err) != TH_OK) {
      std::cerr << "create failed: " << err << "\n";
      return 3;
    }
    vt = cb->vtable;
  }

  th_state st{};
  st.struct_size = TH_STATE_STRUCT_SIZE;
  st.is_local_process_zero = 1;
  st.is_world_process_zero = 1;
  st.max_steps = o.steps;
  st.world_size = 1;
  th_control ctl{};
  ctl.struct_size = TH_CONTROL_STRUCT_SIZE;
  std::vector<double> callback_us;
  auto fire = [&](int32_t ev, const th_values* values = nullptr, const char* ckpt = nullptr) {
    if (vt == nullptr) return;
    th_event_args a{};
    a.struct_size = TH_EVENT_ARGS_STRUCT_SIZE;
    a.event = ev;
    a.state = &st;
    a.control = &ctl;
    a.values = values;
    a.checkpoint_dir = ckpt;
    a.batch_index = -1;
    a.batch_count = -1;
    if (vt->on_event(self, &a, err, sizeof err) != TH_OK) {
      std::cerr << "event " << ev << " failed: " << err << "\n";
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
  if (vt != nullptr) vt->destroy(self);
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
