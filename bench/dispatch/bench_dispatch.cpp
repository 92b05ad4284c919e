// Cost of dispatching one event to plugin callbacks: CallbackHandler::fire ->
// PluginCallback (C++ adapter) -> th_callback_vtable.on_event (C ABI) -> the
// plugin's C++ layer -> its on_step_end. Prints each result as a ratio to the
// 50 ns target (ratio <= 1 meets it).
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>

namespace {

constexpr double kTargetNs = 50.0;

struct NullHost final : trainhook::HostServices {
  void log(int32_t, const std::string&, const std::string&) override {}
  std::string output_dir() const override { return "/tmp"; }
  std::string training_args_json() const override { return "{}"; }
  void request_stop(const std::string&, const std::string&) override {}
  std::string trainer_state_json() const override { return "{}"; }
  std::string model_description() const override { return {}; }
  std::string run_name() const override { return "bench"; }
  std::string set_resume_checkpoint(const std::string&) override { return "no"; }
};

trainhook::PluginRegistry& registry() {
  static trainhook::PluginRegistry r = [] {
    trainhook::PluginSearchOptions o;
    o.plugin_dirs = {BENCH_PLUGIN_DIR};
    o.use_environment = false;
    o.default_dir = "/nonexistent";
    return trainhook::PluginRegistry(o);
  }();
  return r;
}

// One event (on_step_end) to `callbacks` plugin callbacks.
void BM_Fire(benchmark::State& state) {
  NullHost host;
  trainhook::CallbackHandler handler;
  for (int64_t i = 0; i < state.range(0); ++i)
    handler.add(registry().create("bench_" + std::to_string(i), host, "{}"));
  trainhook::TrainerState st;
  trainhook::TrainerControl control;
  for (auto _ : state) {
    ++st.global_step;
    handler.fire(TH_EVENT_STEP_END, st, control);
    benchmark::DoNotOptimize(control);
  }
  state.counters["callbacks"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_Fire)->Arg(0)->Arg(1)->Arg(2)->Arg(4);

// An event that the plugin's mask excludes: the handler skips it without a call.
void BM_FireMasked(benchmark::State& state) {
  NullHost host;
  trainhook::CallbackHandler handler;
  handler.add(registry().create("bench_0", host, "{}"));
  trainhook::TrainerState st;
  trainhook::TrainerControl control;
  for (auto _ : state) {
    handler.fire(TH_EVENT_SUBSTEP_END, st, control);
    benchmark::DoNotOptimize(control);
  }
}
BENCHMARK(BM_FireMasked);

// Collects the CPU time per iteration of each run to print ratios at the end
// (CPU time, not wall time: the machine running the benchmarks is shared).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs)
      if (!r.error_occurred && r.run_type == Run::RT_Iteration)
        ns[r.benchmark_name()] = r.GetAdjustedCPUTime() *
                                 benchmark::GetTimeUnitMultiplier(benchmark::kNanosecond) /
                                 benchmark::GetTimeUnitMultiplier(r.time_unit);
  }
  std::map<std::string, double> ns;
};

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  benchmark::Initialize(&argc, argv);
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto get = [&](const char* name) { return reporter.ns.count(name) ? reporter.ns[name] : -1.0; };
  const double base = get("BM_Fire/0"), one = get("BM_Fire/1"), four = get("BM_Fire/4");
  if (one < 0 || base < 0 || four < 0) return 0;  // filtered out by --benchmark_filter
  std::printf("\ndispatch cost (CPU time) vs target (%.0f ns; ratio <= 1.00 meets it):\n", kTargetNs);
  std::printf("  one event to one plugin callback (whole fire()): %7.1f ns  ratio %.2f\n", one,
              one / kTargetNs);
  std::printf("  per plugin callback, marginal ((4 cb - 0 cb) / 4): %7.1f ns  ratio %.2f\n",
              (four - base) / 4, (four - base) / 4 / kTargetNs);
  std::printf("  handler overhead with no callback:                %7.1f ns\n", base);
  return 0;
}
