// The Trainer with every plugin that exists vs the Trainer with no plugins, in
// one process, interleaved (none, all, all, none, ...). Target: all/none <= 1.03.
//
// The ratio is the median, over the repeats, of each pair's all/none step-time
// ratio (the two runs of a pair are a second apart). On a shared VM the same
// run's step time drifts by +-20% within a minute, and the CPU time of the
// training thread with it; the runs of a pair see nearly the same machine, so
// the pairs cancel that drift where a ratio of the two medians would mix
// different moments. The ratio of medians is printed beside it.
//
//   none  use_plugins = false: DefaultFlowCallback only
//   all   report_to = all integrations found (tensorboard, mlflow, wandb,
//         flyte, ...) plus the progress bar, as a user gets by default
//
// Both configurations do the same work apart from the plugins: log every step
// (logging_steps = 1) and save a checkpoint every --save_steps steps, so the
// flyte plugin's uploads overlap training and the checkpoint writing, which is
// the trainer's own cost, is in both. The timed window is from on_train_begin
// to the last on_step_end (setup and the train-end drain of the plugins'
// queues are outside it; the drain is reported separately).
//
// The peers (mlflow server, W&B-style receiver) come from the environment
// (MLFLOW_TRACKING_URI, WANDB_BASE_URL, WANDB_API_KEY...); scripts/bench starts
// them. The workload is bench/trainer_overhead's: MLP 64-256-256-10 (or a small
// CNN on 8x8 images), batch 64, AdamW, linear schedule, clipping, fixed seeds.
//
// With --isolate all|a,b the pair compared is instead: the same plugins in
// process (baseline) vs those named running each in its own helper process
// (--plugin_isolation; target <= 1.05).
//
// With --profile simple|trace the pair compared is instead: the same plugins
// unprofiled (baseline) vs profiled (--profile; target <= 1.02 for simple). The
// profile's files are written after the timed window, as a run writes them at
// the end of train().
//
// scripts/bench's "observability" figure runs it with --report_to jsonl,csv,
// prometheus --callbacks throughput,system_stats --skip_missing --progress off
// --target 1.02 --baseline_with_host_plugins: those plugins against the same
// trainer with plugins on but none of them enabled (the printer, which every
// plugin run has, is in both), so the ratio is their cost alone. --skip_missing
// leaves out the names no library on the plugin path provides (an unbuilt plugin).
//
// usage: bench_all_plugins [--model mlp|cnn] [--repeats 5] [--steps 300]
//          [--save_steps 50] [--report_to all|a,b] [--plugin_config JSON] [--json FILE]
//          [--isolate all|a,b] [--callbacks a,b] [--skip_missing] [--progress on|off] [--target X]
//          [--baseline_with_host_plugins] [--profile simple|trace|ops]
#include <bench_harness.hpp>

#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/models/cnn.hpp>
#include <trainhook/models/mlp.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace {

using namespace trainhook::bench;
constexpr int64_t kHidden = 256;
constexpr double kTargetRatio = 1.03;
constexpr double kIsolatedTargetRatio = 1.05;
constexpr double kProfiledTargetRatio = 1.02;

struct Options {
  std::string model = "mlp";
  int repeats = 5;
  int64_t steps = 300;
  int64_t save_steps = 50;
  std::string report_to = "all";
  nlohmann::json plugin_config = nlohmann::json::object();
  std::string json_file;
  std::vector<std::string> integrations;  // report_to resolved once
  std::string isolate;                    // --isolate: "all" or names; empty = none vs all
  std::vector<std::string> isolated;      // resolved
  std::vector<std::string> callbacks;     // --callbacks: Kind::callback plugins in the plugin runs
  bool skip_missing = false;              // drop report_to/callbacks names no library provides
  bool progress = true;                   // the progress bar in the plugin runs
  double target = 0;                      // > 0: the ratio's target instead of the default
  // The baseline loads plugins too (the printer or progress bar, as --progress
  // says) but enables none of the measured ones: the ratio is then the cost of
  // those plugins alone.
  bool baseline_with_host_plugins = false;
  // --profile: baseline = unprofiled, measured = the same run profiled.
  trainhook::ProfileMode profile = trainhook::ProfileMode::none;
};

std::shared_ptr<trainhook::Model> make_model(const std::string& kind) {
  torch::manual_seed(1);
  if (kind == "cnn")
    return std::make_shared<trainhook::CnnModel>(trainhook::CnnOptions{8, kClasses, 32, 128, 0.0});
  return make_mlp(kHidden);
}

double cpu_s(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Train-begin -> last step-end (the loop), and last step-end -> train-end
// (the final log, and every callback's on_train_end: the plugins' drain).
// Besides wall time it takes the CPU time of the training thread (these
// events are fired on it) and of the whole process (plugin workers included):
// on a shared machine they tell the cost of the plugins apart from the wait
// for a core.
struct RunTime {
  double loop_s = 0, end_s = 0;
  // The loop's second half alone (steps N/2+1..N), per step: the steady state,
  // without the plugins' start of run (creating the run on its server, the
  // first request, opening files) that falls in the first steps.
  double second_half_s = 0;
  double thread_cpu_s = 0, process_cpu_s = 0;
  // The training thread's minor page faults and preemptions (involuntary
  // context switches) per step: where a slower step went besides CPU.
  double minor_faults = 0, preemptions = 0, migrations = 0;
  // Time the training thread was runnable but waited for a core, and its
  // sleeps (voluntary context switches: a waited call, a lock, I/O), per step.
  double runqueue_wait_s = 0, sleeps = 0;
  double children_cpu_s = 0;  // the helper processes' CPU (isolated plugins)
  // The saves inside the loop (from the step end that asked for one to the
  // next step's begin: the checkpoint and every on_save), and their count;
  // run() turns them into one save's time and the loop's time per step
  // without them.
  double saves_s = 0;
  int saves = 0;
  double save_s = 0, unsaved_loop_s = 0;
};

// se.nr_migrations of this thread (moves between cores, each a cold cache),
// or -1 where the kernel does not show it.
long thread_migrations() {
  std::ifstream in("/proc/thread-self/sched");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("se.nr_migrations", 0) == 0) return std::stol(line.substr(line.find(':') + 1));
  return -1;
}

// The second field of /proc/thread-self/schedstat: nanoseconds this thread
// spent runnable on a run queue, or -1 where the kernel does not show it.
long long thread_runqueue_wait_ns() {
  std::ifstream in("/proc/thread-self/schedstat");
  long long running = 0, waiting = -1;
  if (!(in >> running >> waiting)) return -1;
  return waiting;
}

// CPU nanoseconds of every thread of this process's child processes (the
// isolated plugins' helpers) from /proc: what isolation moves to other cores.
long long children_cpu_ns() {
  long long total = 0;
  std::error_code ec;
  for (const auto& task : fs::directory_iterator("/proc/self/task", ec)) {
    std::ifstream children(task.path() / "children");
    long pid = 0;
    while (children >> pid) {
      std::error_code ec2;
      for (const auto& t : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec2)) {
        std::ifstream in(t.path() / "schedstat");
        long long running = 0;
        if (in >> running) total += running;
      }
    }
  }
  return total;
}

struct ThreadCounts {
  long minor_faults = 0, preemptions = 0, sleeps = 0;
};

ThreadCounts thread_counts() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return {u.ru_minflt, u.ru_nivcsw, u.ru_nvcsw};
}

class LoopTimer final : public trainhook::Callback {
 public:
  explicit LoopTimer(RunTime* out) : out_(out) {}
  void on_train_begin(trainhook::Event& e) override { tick(e); }
  void on_step_end(trainhook::Event& e) override {
    tick(e);
    // The flow callback (before this one) has decided: a checkpoint follows.
    if (e.control().should_save) save_from_ = Clock::now();
  }
  // The save of the step before (checkpoint and on_save) ends here.
  void on_step_begin(trainhook::Event&) override {
    if (save_from_ == Clock::time_point{}) return;
    out_->saves_s += std::chrono::duration<double>(Clock::now() - save_from_).count();
    ++out_->saves;
    save_from_ = {};
  }
  void on_train_end(trainhook::Event& e) override { tick(e); }

 private:
  void tick(trainhook::Event& e) {
    const int32_t event = e.id();
    const auto now = Clock::now();
    const double thread = cpu_s(CLOCK_THREAD_CPUTIME_ID), process = cpu_s(CLOCK_PROCESS_CPUTIME_ID);
    if (event == TH_EVENT_TRAIN_BEGIN) {
      start_ = last_step_ = now;
      thread0_ = thread;
      process0_ = process;
      counts0_ = thread_counts();
      migrations0_ = thread_migrations();
      runqueue0_ns_ = thread_runqueue_wait_ns();
      children0_ns_ = children_cpu_ns();
    } else if (event == TH_EVENT_STEP_END) {
      last_step_ = now;
      if (e.state().global_step == e.state().max_steps / 2) mid_step_ = now;
      out_->thread_cpu_s = thread - thread0_;
      out_->process_cpu_s = process - process0_;
      // The counters cost a system call or a file read: at the last step only.
      if (e.state().global_step == e.state().max_steps) {
        const ThreadCounts c = thread_counts();
        out_->minor_faults = static_cast<double>(c.minor_faults - counts0_.minor_faults);
        out_->preemptions = static_cast<double>(c.preemptions - counts0_.preemptions);
        out_->migrations = static_cast<double>(thread_migrations() - migrations0_);
        out_->sleeps = static_cast<double>(c.sleeps - counts0_.sleeps);
        out_->runqueue_wait_s = static_cast<double>(thread_runqueue_wait_ns() - runqueue0_ns_) * 1e-9;
        out_->children_cpu_s = static_cast<double>(children_cpu_ns() - children0_ns_) * 1e-9;
      }
    } else {
      out_->loop_s = std::chrono::duration<double>(last_step_ - start_).count();
      out_->end_s = std::chrono::duration<double>(now - last_step_).count();
      out_->second_half_s = std::chrono::duration<double>(last_step_ - mid_step_).count();
    }
  }

 private:
  RunTime* out_;
  Clock::time_point start_, last_step_, mid_step_;
  double thread0_ = 0, process0_ = 0;
  ThreadCounts counts0_;
  long migrations0_ = 0;
  long long runqueue0_ns_ = 0, children0_ns_ = 0;
  Clock::time_point save_from_{};
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// plugins: the configuration's plugins; isolated: run those of --isolate in
// helper processes; profile: --profile of the run.
RunTime run(const Options& o, const std::shared_ptr<trainhook::TensorDataset>& data, bool plugins,
            const fs::path& out, bool isolated = false,
            trainhook::ProfileMode profile = trainhook::ProfileMode::none) {
  trainhook::TrainingArguments a;
  a.output_dir = out.string();
  a.max_steps = o.steps;
  a.per_device_train_batch_size = kBatch;
  a.learning_rate = 1e-3;
  a.logging_steps = 1;
  a.save_strategy = trainhook::SaveStrategy::steps;
  a.save_steps = static_cast<double>(o.save_steps);
  a.save_total_limit = 2;
  a.report_to = plugins && !o.integrations.empty() ? o.integrations : std::vector<std::string>{"none"};
  a.disable_tqdm = !plugins || !o.progress;
  a.profile = profile;
  if (plugins) {
    a.callbacks = o.callbacks;
    a.plugin_config = o.plugin_config;
    if (isolated) a.plugin_isolation = o.isolated;
    // Each run uploads to its own destination (unless the caller chose one).
    const bool flyte =
        std::find(o.integrations.begin(), o.integrations.end(), "flyte") != o.integrations.end();
    if (flyte && !a.plugin_config["flyte"].contains("checkpoint_path") &&
        !std::getenv("TRAINHOOK_CHECKPOINT_DEST"))
      a.plugin_config["flyte"]["checkpoint_path"] = (out / "flyte-dest").string();
  }
  RunTime t;
  trainhook::TrainerOptions options;
  options.use_plugins = plugins || o.baseline_with_host_plugins;
  options.callbacks.push_back(trainhook::make_callback<LoopTimer>("stopwatch", &t));
  {
    trainhook::Trainer trainer(make_model(o.model), a, data, nullptr, std::move(options));
    trainer.train();
    for (const auto& d : trainer.callback_handler().disabled())
      throw std::runtime_error("plugin " + d.callback + " was disabled at " + d.event + ": " + d.message);
  }
  // Per step: the window holds all N steps after train begin.
  const double n = static_cast<double>(o.steps);
  t.unsaved_loop_s = (t.loop_s - t.saves_s) / n;
  t.save_s = t.saves > 0 ? t.saves_s / t.saves : 0;
  t.loop_s /= n;
  t.second_half_s /= static_cast<double>(o.steps - o.steps / 2);
  t.thread_cpu_s /= n;
  t.process_cpu_s /= n;
  t.minor_faults /= n;
  t.preemptions /= n;
  t.migrations /= n;
  t.runqueue_wait_s /= n;
  t.sleeps /= n;
  t.children_cpu_s /= n;
  return t;
}

int bench(Options o) {
  spdlog::set_level(spdlog::level::warn);
  {
    // What "all" means on this machine, resolved once so every run uses the
    // same list (and the output says which plugins were measured).
    trainhook::PluginRegistry registry{trainhook::PluginSearchOptions{}};
    if (o.skip_missing) {
      auto keep_found = [&](std::vector<std::string> names, const char* what) {
        std::vector<std::string> found;
        for (const auto& name : names) {
          if (name == "all" || name == "none" || registry.has(name))
            found.push_back(name);
          else
            std::fprintf(stderr, "bench_all_plugins: %s '%s' is not built; left out\n", what, name.c_str());
        }
        return found;
      };
      const std::vector<std::string> reports = keep_found(split(o.report_to), "integration");
      o.report_to.clear();
      for (const auto& r : reports) o.report_to += (o.report_to.empty() ? "" : ",") + r;
      if (o.report_to.empty()) o.report_to = "none";
      o.callbacks = keep_found(o.callbacks, "callback");
    }
    o.integrations = registry.resolve_report_to(split(o.report_to));
    if (o.integrations.size() == 1 && o.integrations[0] == "none") o.integrations.clear();
    std::string list;
    for (const auto& n : o.integrations) list += (list.empty() ? "" : ", ") + n;
    std::string cbs;
    for (const auto& n : o.callbacks) cbs += (cbs.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "bench_all_plugins: integrations: %s; callbacks: %s; progress plugin: %s\n",
                 list.empty() ? "(none found)" : list.c_str(), cbs.empty() ? "(none)" : cbs.c_str(),
                 o.progress && registry.has("progress") ? "yes" : "no");
    if (!o.isolate.empty()) o.isolated = o.isolate == "all" ? o.integrations : split(o.isolate);
  }

  char tmpl[] = "/tmp/trainhook-bench-all-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
  const fs::path work = tmpl;
  auto data = make_data();
  // --isolate: baseline = the plugins in process, measured = the same isolated.
  const bool compare_isolation = !o.isolate.empty();
  // --profile: both runs have the plugins; the measured one is profiled.
  const bool compare_profile = o.profile != trainhook::ProfileMode::none;
  auto base_run = [&](const fs::path& dir) {
    return run(o, data, compare_isolation || compare_profile, dir);
  };
  auto test_run = [&](const fs::path& dir) { return run(o, data, true, dir, compare_isolation, o.profile); };
  std::vector<RunTime> base, test;  // each repeat's pair, in run order
  int n = 0;
  auto next_dir = [&] { return work / ("run-" + std::to_string(n++)); };
  try {
    base_run(next_dir());  // warm-up (allocator, kernels, page cache)
    test_run(next_dir());
    for (int r = 0; r < o.repeats; ++r) {
      // Alternate the order so a drift of the machine's load favours neither.
      RunTime tn, ta;
      if (r % 2 == 0) {
        tn = base_run(next_dir());
        ta = test_run(next_dir());
      } else {
        ta = test_run(next_dir());
        tn = base_run(next_dir());
      }
      base.push_back(tn);
      test.push_back(ta);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(work, ec);
    throw;
  }
  std::error_code ec;
  fs::remove_all(work, ec);
  // A field of every repeat; its median; the median of the repeats' test/base ratios.
  auto runs_of = [](const std::vector<RunTime>& runs, double RunTime::*field, double scale = 1) {
    std::vector<double> v;
    for (const RunTime& r : runs) v.push_back(r.*field * scale);
    return v;
  };
  auto med = [&](const std::vector<RunTime>& runs, double RunTime::*field, double scale = 1) {
    return median(runs_of(runs, field, scale));
  };
  auto paired = [&](double RunTime::*field) {
    std::vector<double> v;
    for (size_t i = 0; i < base.size(); ++i) v.push_back(test[i].*field / base[i].*field);
    return median(v);
  };
  const double ratio = paired(&RunTime::loop_s);
  const double ratio_of_medians = med(test, &RunTime::loop_s) / med(base, &RunTime::loop_s);
  const double target = o.target > 0        ? o.target
                        : compare_isolation ? kIsolatedTargetRatio
                        : compare_profile   ? kProfiledTargetRatio
                                            : kTargetRatio;
  const std::string profiled = std::string("--profile ") + trainhook::enum_name(o.profile);
  const char* base_label = compare_isolation ? "plugins in process"
                           : compare_profile ? "not profiled"
                                             : "no plugins";
  const char* test_label = compare_isolation ? "plugins isolated"
                           : compare_profile ? profiled.c_str()
                                             : "all plugins";
  std::printf(
      "\n%s, batch %lld, %lld steps, log every step, save every %lld steps, %d interleaved repeats:\n",
      o.model == "cnn" ? "CNN 8x8" : "MLP 64-256-256-10", static_cast<long long>(kBatch),
      static_cast<long long>(o.steps), static_cast<long long>(o.save_steps), o.repeats);
  if (compare_isolation) {
    std::string names;
    for (const auto& name : o.isolated) names += (names.empty() ? "" : ", ") + name;
    std::printf("  isolated (--plugin_isolation): %s\n", names.c_str());
  }
  std::printf("  trainer, %-18s %8.1f us/step   train end %6.1f ms\n", base_label,
              med(base, &RunTime::loop_s, 1e6), med(base, &RunTime::end_s, 1e3));
  std::printf("  trainer, %-18s %8.1f us/step   train end %6.1f ms (plugins drain their queues)\n",
              test_label, med(test, &RunTime::loop_s, 1e6), med(test, &RunTime::end_s, 1e3));
  std::printf("  ratio %s / %s: %.3f (median of paired ratios; ratio of medians %.3f), target <= %.2f: %s\n",
              test_label, base_label, ratio, ratio_of_medians, target,
              ratio <= target ? "ok" : "ABOVE TARGET");
  const double second_half_ratio = paired(&RunTime::second_half_s);
  std::printf("  second half of the loop only (steps %lld-%lld): %.1f vs %.1f us/step, ratio %.3f\n",
              static_cast<long long>(o.steps / 2 + 1), static_cast<long long>(o.steps),
              med(test, &RunTime::second_half_s, 1e6), med(base, &RunTime::second_half_s, 1e6),
              second_half_ratio);
  const bool saved = base.front().saves > 0 && test.front().saves > 0;  // the same steps: the same saves
  const double unsaved_ratio = saved ? paired(&RunTime::unsaved_loop_s) : 0;
  if (saved)
    std::printf(
        "  a save (checkpoint and on_save): %.2f vs %.2f ms; the loop without its saves: %.1f vs %.1f "
        "us/step "
        "(ratio %.3f)\n",
        med(test, &RunTime::save_s, 1e3), med(base, &RunTime::save_s, 1e3),
        med(test, &RunTime::unsaved_loop_s, 1e6), med(base, &RunTime::unsaved_loop_s, 1e6), unsaved_ratio);
  const double thread_ratio = paired(&RunTime::thread_cpu_s);
  std::printf(
      "  CPU per step, training thread: %.1f vs %.1f us (ratio %.3f); whole process: %.1f vs %.1f us\n",
      med(test, &RunTime::thread_cpu_s, 1e6), med(base, &RunTime::thread_cpu_s, 1e6), thread_ratio,
      med(test, &RunTime::process_cpu_s, 1e6), med(base, &RunTime::process_cpu_s, 1e6));
  if (compare_isolation)
    std::printf("  CPU per step, helper processes: %.1f us (the whole process in process: %.1f us)\n",
                med(test, &RunTime::children_cpu_s, 1e6), med(base, &RunTime::process_cpu_s, 1e6));
  std::printf(
      "  training thread per step: minor page faults %.2f vs %.2f, preemptions %.3f vs %.3f, "
      "moves to another core %.3f vs %.3f\n",
      med(test, &RunTime::minor_faults), med(base, &RunTime::minor_faults), med(test, &RunTime::preemptions),
      med(base, &RunTime::preemptions), med(test, &RunTime::migrations), med(base, &RunTime::migrations));
  std::printf("  training thread per step: waited for a core %.1f vs %.1f us, sleeps %.3f vs %.3f\n",
              med(test, &RunTime::runqueue_wait_s, 1e6), med(base, &RunTime::runqueue_wait_s, 1e6),
              med(test, &RunTime::sleeps), med(base, &RunTime::sleeps));
  if (!o.json_file.empty()) {
    nlohmann::json j = {{"model", o.model},
                        {"steps", o.steps},
                        {"repeats", o.repeats},
                        {"save_steps", o.save_steps},
                        {"ratio", ratio},
                        {"ratio_of_medians", ratio_of_medians},
                        {"second_half_ratio", second_half_ratio},
                        {"thread_cpu_ratio", thread_ratio}};
    if (saved) j["unsaved_loop_ratio"] = unsaved_ratio;
    // "none_*" the baseline, "all_*" the measured runs (the names the suite reads).
    const std::pair<const char*, std::vector<RunTime>*> arms[] = {{"none", &base}, {"all", &test}};
    for (const auto& [arm, runs] : arms) {
      const std::string a = arm;
      j[a + "_step_us"] = med(*runs, &RunTime::loop_s, 1e6);
      j[a + "_train_end_ms"] = med(*runs, &RunTime::end_s, 1e3);
      j[a + "_thread_cpu_us"] = med(*runs, &RunTime::thread_cpu_s, 1e6);
      j[a + "_process_cpu_us"] = med(*runs, &RunTime::process_cpu_s, 1e6);
      j[a + "_minor_faults_per_step"] = med(*runs, &RunTime::minor_faults);
      j[a + "_preemptions_per_step"] = med(*runs, &RunTime::preemptions);
      j[a + "_migrations_per_step"] = med(*runs, &RunTime::migrations);
      j[a + "_runqueue_wait_us_per_step"] = med(*runs, &RunTime::runqueue_wait_s, 1e6);
      j[a + "_sleeps_per_step"] = med(*runs, &RunTime::sleeps);
      if (saved) {
        j[a + "_save_ms"] = med(*runs, &RunTime::save_s, 1e3);
        j[a + "_unsaved_step_us"] = med(*runs, &RunTime::unsaved_loop_s, 1e6);
      }
      // Every repeat, in run order, to see the machine's drift.
      j[a + "_step_us_runs"] = runs_of(*runs, &RunTime::loop_s, 1e6);
      j[a + "_second_half_step_us_runs"] = runs_of(*runs, &RunTime::second_half_s, 1e6);
      j[a + "_thread_cpu_us_runs"] = runs_of(*runs, &RunTime::thread_cpu_s, 1e6);
    }
    if (compare_isolation) j["all_helper_cpu_us"] = med(test, &RunTime::children_cpu_s, 1e6);
    j["integrations"] = o.integrations;
    j["isolated"] = o.isolated;
    j["profile"] = trainhook::enum_name(o.profile);
    j["callbacks"] = o.callbacks;
    j["progress"] = o.progress;
    j["baseline_with_host_plugins"] = o.baseline_with_host_plugins;
    j["target"] = target;
    std::ofstream(o.json_file) << j.dump(2) << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  (void)trainhook::apply_allocator_policy();  // as the trainhook program (bench_harness.hpp)
  Options o;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      auto number = [&]() -> long long {
        const std::string v = value();
        size_t used = 0;
        long long n = 0;
        try {
          n = std::stoll(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != v.size())
          throw std::invalid_argument(a + " must be a whole number, got '" + v + "'");
        return n;
      };
      if (a == "--model")
        o.model = value();
      else if (a == "--repeats")
        o.repeats = static_cast<int>(number());
      else if (a == "--steps")
        o.steps = number();
      else if (a == "--save_steps")
        o.save_steps = number();
      else if (a == "--report_to")
        o.report_to = value();
      else if (a == "--plugin_config")
        o.plugin_config = nlohmann::json::parse(value());
      else if (a == "--json")
        o.json_file = value();
      else if (a == "--isolate")
        o.isolate = value();
      else if (a == "--profile") {
        const std::string v = value();
        const auto mode = trainhook::parse_enum<trainhook::ProfileMode>(v);
        if (!mode)
          throw std::invalid_argument("--profile must be one of " +
                                      trainhook::enum_choices<trainhook::ProfileMode>() + ", got '" + v +
                                      "'");
        o.profile = *mode;
      } else if (a == "--callbacks")
        o.callbacks = split(value());
      else if (a == "--skip_missing")
        o.skip_missing = true;
      else if (a == "--baseline_with_host_plugins")
        o.baseline_with_host_plugins = true;
      else if (a == "--progress") {
        const std::string v = value();
        if (v != "on" && v != "off")
          throw std::invalid_argument("--progress must be on or off, got '" + v + "'");
        o.progress = v == "on";
      } else if (a == "--target") {
        const std::string v = value();
        size_t used = 0;
        try {
          o.target = std::stod(v, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != v.size() || !(o.target > 0))
          throw std::invalid_argument("--target must be a positive number, got '" + v + "'");
      } else
        throw std::invalid_argument(
            "unknown argument '" + a +
            "' (expected --model, --repeats, --steps, --save_steps, --report_to, "
            "--plugin_config, --json, --isolate, --callbacks, --skip_missing, --progress, --target, "
            "--baseline_with_host_plugins, --profile)");
    }
    if (o.model != "mlp" && o.model != "cnn")
      throw std::invalid_argument("--model must be mlp or cnn, got '" + o.model + "'");
    if (o.repeats < 1 || o.steps < 2 || o.save_steps < 1)
      throw std::invalid_argument("--repeats must be >= 1, --steps >= 2, --save_steps >= 1");
    if (o.profile != trainhook::ProfileMode::none && !o.isolate.empty())
      throw std::invalid_argument("--profile and --isolate each choose the pair compared: give one");
    if (!o.plugin_config.is_object())
      throw std::invalid_argument("--plugin_config must be a JSON object like {\"wandb\": {...}}");
    return bench(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_all_plugins: %s\n", e.what());
    return 2;
  }
}
