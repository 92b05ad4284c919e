// Peak RSS of a long run vs a short one, through every integration plugin:
// is the memory of the plugins (and of the core's dispatch) flat in the number
// of metrics logged? Target: long/short peak RSS <= 1.05.
//
// No LibTorch: each run drives core's PluginRegistry + CallbackHandler with the
// Trainer's host (TrainerServices) and a synthetic TrainerState, firing what the
// Trainer fires per optimizer step (on_step_begin, on_step_end, on_log with
// --per_log metrics, on_save every --save_every steps with a small checkpoint
// folder), with --step_us of busy "compute" per step so the plugins' workers
// run beside the loop as they do in training. The synthetic state does not keep
// log_history: the Trainer's own log_history grows with every log by design
// (as HF's), and is not what this measures.
//
// Each run is a fresh child process (this program with --child); its VmHWM
// (peak resident set) is read from /proc/self/status at the end.
//
// usage: bench_peak_rss [--metrics 1000000] [--short_metrics 20000] [--per_log 10]
//          [--step_us 50] [--save_every 5000] [--report_to all|a,b] [--plugin_config JSON]
//          [--json FILE]
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/trainer/trainer_services.hpp>
#include <trainhook/args/arguments_json.hpp>

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kTargetRatio = 1.05;

struct Options {
  int64_t metrics = 1000000;
  int64_t short_metrics = 20000;
  int64_t per_log = 10;
  int64_t step_us = 50;
  int64_t save_every = 5000;
  std::string report_to = "all";
  std::string plugin_config = "{}";
  std::string json_file;
};

// kB from a "Name:   123 kB" line of /proc/self/status.
int64_t status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  throw std::runtime_error("no " + field + " in /proc/self/status");
}

void busy_wait(int64_t us) {
  const auto until = Clock::now() + std::chrono::microseconds(us);
  while (Clock::now() < until) {
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// The plugin_config section of one callback, with bench defaults filled in
// where the caller gave none (a flyte destination inside this run's folder).
std::string section(const nlohmann::json& config, const std::string& name, const fs::path& work) {
  nlohmann::json s = config.contains(name) ? config[name] : nlohmann::json::object();
  if (name == "flyte" && !s.contains("checkpoint_path") && !std::getenv("TRAINHOOK_CHECKPOINT_DEST"))
    s["checkpoint_path"] = (work / "flyte-dest").string();
  return s.dump();
}

// One run of `metrics` metrics; prints one JSON line.
int child(const Options& o) {
  spdlog::set_level(spdlog::level::warn);
  char tmpl[] = "/tmp/trainhook-bench-rss-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const fs::path work = tmpl;
  const fs::path out = work / "out";
  fs::create_directories(out);

  trainhook::PluginRegistry registry{trainhook::PluginSearchOptions{}};
  const auto names = registry.resolve_report_to(split(o.report_to));
  if (names.empty()) throw std::runtime_error("--report_to " + o.report_to + " names no integration plugin");
  const int64_t steps = (o.metrics + o.per_log - 1) / o.per_log;

  trainhook::TrainingArguments args;
  args.output_dir = out.string();
  args.max_steps = steps;
  args.logging_steps = 1;
  args.save_steps = static_cast<double>(o.save_every);
  args.report_to = names;
  trainhook::TrainerState state;
  state.max_steps = steps;
  state.logging_steps = 1;
  state.save_steps = o.save_every;
  state.train_batch_size = 64;
  state.num_train_epochs = 1;
  state.steps_in_epoch = steps;
  // On the heap so the callbacks can be destroyed before the peak is read: a
  // plugin may finish its run there (wandb sends its end mark at destruction).
  auto handler_ptr = std::make_unique<trainhook::CallbackHandler>();
  trainhook::CallbackHandler& handler = *handler_ptr;
  auto host_ptr = std::make_unique<trainhook::TrainerServices>(
      trainhook::TrainerServices::Config{out.string(), trainhook::to_json(args).dump(), "bench-rss", "synthetic"},
      state, handler);
  trainhook::TrainerServices& host = *host_ptr;
  const auto config = nlohmann::json::parse(o.plugin_config);
  for (const auto& n : names) handler.add(registry.create(n, host, section(config, n, work)));

  std::vector<std::string> key_text;
  for (int64_t k = 0; k < o.per_log; ++k)
    key_text.push_back(k == 0   ? "loss"
                       : k == 1 ? "learning_rate"
                       : k == 2 ? "grad_norm"
                                : "metric_" + std::to_string(k));
  std::vector<const char*> keys;
  for (const auto& k : key_text) keys.push_back(k.c_str());
  std::vector<double> values(keys.size());
  th_values logs{};
  logs.struct_size = TH_VALUES_STRUCT_SIZE;
  logs.count = static_cast<uint32_t>(keys.size());
  logs.keys = keys.data();
  logs.values = values.data();

  trainhook::TrainerControl control;
  const int64_t rss_before = status_kb("VmRSS");
  const auto start = Clock::now();
  handler.fire(TH_EVENT_INIT_END, state, control);
  host.train_begins();
  handler.fire(TH_EVENT_TRAIN_BEGIN, state, control);
  handler.fire(TH_EVENT_EPOCH_BEGIN, state, control);
  for (int64_t step = 1; step <= steps; ++step) {
    handler.fire(TH_EVENT_STEP_BEGIN, state, control);
    busy_wait(o.step_us);
    state.global_step = step;
    state.epoch = static_cast<double>(step) / static_cast<double>(steps);
    handler.fire(TH_EVENT_STEP_END, state, control);
    for (size_t k = 0; k < values.size(); ++k) values[k] = 1.0 / static_cast<double>(step + k);
    trainhook::EventPayload p;
    p.values = &logs;
    handler.fire(TH_EVENT_LOG, state, control, p);
    if (step % o.save_every == 0 || step == steps) {
      const fs::path ckpt = out / ("checkpoint-" + std::to_string(step));
      fs::create_directories(ckpt);
      std::ofstream(ckpt / "model.pt") << std::string(4096, 'w');
      std::ofstream(ckpt / "trainer_state.json") << "{\"global_step\": " << step << "}\n";
      trainhook::EventPayload sp;
      const std::string dir = ckpt.string();
      sp.checkpoint_dir = dir.c_str();
      handler.fire(TH_EVENT_SAVE, state, control, sp);
    }
  }
  handler.fire(TH_EVENT_EPOCH_END, state, control);
  const double loop_s = std::chrono::duration<double>(Clock::now() - start).count();
  handler.fire(TH_EVENT_TRAIN_END, state, control);
  std::vector<std::string> disabled;
  for (const auto& d : handler.disabled())
    disabled.push_back(d.callback + " at " + d.event + ": " + d.message);
  // The callbacks' end of run (counted in train_end_s and the peak); the
  // handler goes before the host, which a callback reports through meanwhile.
  handler_ptr.reset();
  host_ptr.reset();
  const double total_s = std::chrono::duration<double>(Clock::now() - start).count();
  const nlohmann::json result = {{"metrics", steps * o.per_log},
                                 {"steps", steps},
                                 {"callbacks", names},
                                 {"rss_before_kb", rss_before},
                                 {"peak_rss_kb", status_kb("VmHWM")},
                                 {"loop_s", loop_s},
                                 {"train_end_s", total_s - loop_s},
                                 {"disabled", disabled}};
  std::printf("%s\n", result.dump().c_str());
  std::fflush(stdout);
  std::error_code ec;
  fs::remove_all(work, ec);
  return 0;
}

nlohmann::json run_child(const Options& o, int64_t metrics) {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  auto q = [](const std::string& s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
  };
  const std::string cmd = q(self.string()) + " --child --metrics " + std::to_string(metrics) + " --per_log " +
                          std::to_string(o.per_log) + " --step_us " + std::to_string(o.step_us) +
                          " --save_every " + std::to_string(o.save_every) + " --report_to " + q(o.report_to) +
                          " --plugin_config " + q(o.plugin_config);
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("cannot run " + cmd);
  std::string text;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  const int rc = pclose(p);
  const auto brace = text.rfind('{');
  if (rc != 0 || brace == std::string::npos)
    throw std::runtime_error("run of " + std::to_string(metrics) + " metrics failed (status " +
                             std::to_string(rc) + "): " + text);
  return nlohmann::json::parse(text.substr(brace));
}

int parent(const Options& o) {
  // A run of half the metrics too: if the long run's peak is above the short
  // one's but equal to the half run's, memory grew to a bound and stayed there
  // (a queue filled up); if it keeps growing with the run, it is not bounded.
  const auto short_run = run_child(o, o.short_metrics);
  const auto half_run = run_child(o, std::max<int64_t>(1, o.metrics / 2));
  const auto long_run = run_child(o, o.metrics);
  const double ratio = long_run["peak_rss_kb"].get<double>() / short_run["peak_rss_kb"].get<double>();
  const double half_ratio = long_run["peak_rss_kb"].get<double>() / half_run["peak_rss_kb"].get<double>();
  std::printf("peak RSS through %s (%lld metrics per log, %lld us compute per step):\n",
              long_run["callbacks"].dump().c_str(), static_cast<long long>(o.per_log),
              static_cast<long long>(o.step_us));
  for (const auto* r : {&short_run, &half_run, &long_run})
    std::printf("  %9lld metrics: peak %7.1f MiB (%.1f MiB before the run), loop %.1f s, train end %.1f s\n",
                (*r)["metrics"].get<long long>(), (*r)["peak_rss_kb"].get<double>() / 1024,
                (*r)["rss_before_kb"].get<double>() / 1024, (*r)["loop_s"].get<double>(),
                (*r)["train_end_s"].get<double>());
  std::printf("  long/short: %.3f (target <= %.2f) %s; long/half: %.3f\n", ratio, kTargetRatio,
              ratio <= kTargetRatio ? "ok" : "ABOVE TARGET", half_ratio);
  for (const auto* r : {&short_run, &half_run, &long_run})
    for (const auto& d : (*r)["disabled"]) std::printf("  disabled: %s\n", d.get<std::string>().c_str());
  if (!o.json_file.empty()) {
    const nlohmann::json out = {{"short", short_run}, {"half", half_run},         {"long", long_run},
                                {"ratio", ratio},     {"half_ratio", half_ratio}, {"target", kTargetRatio}};
    std::ofstream(o.json_file) << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  bool is_child = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      auto count = [&]() {
        const std::string v = value();
        size_t used = 0;
        long long n = -1;
        try {
          n = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != v.size() || n < 0)
          throw std::invalid_argument(a + " must be a whole number >= 0, got '" + v + "'");
        return static_cast<int64_t>(n);
      };
      if (a == "--child")
        is_child = true;
      else if (a == "--metrics")
        o.metrics = count();
      else if (a == "--short_metrics")
        o.short_metrics = count();
      else if (a == "--per_log")
        o.per_log = count();
      else if (a == "--step_us")
        o.step_us = count();
      else if (a == "--save_every")
        o.save_every = count();
      else if (a == "--report_to")
        o.report_to = value();
      else if (a == "--plugin_config")
        o.plugin_config = value();
      else if (a == "--json")
        o.json_file = value();
      else
        throw std::invalid_argument("unknown argument '" + a +
                                    "' (expected --metrics, --short_metrics, --per_log, --step_us, "
                                    "--save_every, --report_to, --plugin_config, --json)");
    }
    if (o.per_log < 1 || o.save_every < 1 || o.metrics < 1 || o.short_metrics < 1)
      throw std::invalid_argument("--metrics, --short_metrics, --per_log and --save_every must be >= 1");
    if (!nlohmann::json::parse(o.plugin_config).is_object())
      throw std::invalid_argument("--plugin_config must be a JSON object like {\"wandb\": {...}}");
    return is_child ? child(o) : parent(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_peak_rss: %s\n", e.what());
    return 2;
  }
}
