// ABI 1.1 costs on the 1.1 M-parameter bench MLP (64-1024-1024-10, batch 64),
// in one process, interleaved:
//   views     one th_host.tensors() call for every parameter / gradient view,
//             through the plugin-facing C table (target <= 5 us per call);
//   plain     the Trainer with plugins but no callbacks (baseline step time);
//   grad_stats  the grad_stats plugin logging every step (target <= 1.02 of plain);
//   ema       the ema plugin updating every step (target <= 1.05 of plain).
// Medians of the repeats; prints ratios. usage: bench_model_access [repeats=5] [steps=200]
#include <bench_harness.hpp>

#include <trainhook/plugin_host/model_access.hpp>
#include <trainhook/plugin_host/plugin_registry.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <cstdio>
#include <cstdlib>

namespace {

using namespace trainhook::bench;
constexpr int64_t kHidden = 1024;

// Times the training steps (Stopwatch); at the first on_pre_optimizer_step also
// times `calls` tensors() calls for parameters and gradients through ModelAccess.
class Probe final : public Stopwatch {
 public:
  Probe(double* seconds, double* view_us, trainhook::HostServices** host)
      : Stopwatch(seconds), view_us_(view_us), host_(host) {}
  void on_pre_optimizer_step(trainhook::Event& e) override {
    if (view_us_ == nullptr || e.state().global_step != 3) return;
    trainhook::ModelAccess* m = (*host_)->model_access();
    constexpr int calls = 20000;
    th_tensor_list l{};
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) {
      m->tensors(i % 2 == 0 ? TH_TENSORS_PARAMETERS : TH_TENSORS_GRADIENTS, TH_ACCESS_READ, l);
    }
    *view_us_ = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
    views_ = l.count;
  }
  uint32_t views_ = 0;

 private:
  double* view_us_;
  trainhook::HostServices** host_;
};

double run(const std::shared_ptr<trainhook::TensorDataset>& data, int64_t steps, const std::string& callback,
           double* view_us = nullptr) {
  auto a = bench_args(steps, temp_output_dir("trainhook-bench-model-access"));
  a.logging_steps = 1;  // grad_stats then works every step
  a.disable_tqdm = true;
  if (!callback.empty()) a.callbacks = {callback};
  double seconds = 0;
  trainhook::HostServices* host = nullptr;
  trainhook::TrainerOptions options;
  options.callbacks.push_back(trainhook::make_callback<Probe>("probe", &seconds, view_us, &host));
  trainhook::Trainer trainer(make_mlp(kHidden), a, data, nullptr, std::move(options));
  host = &trainer.host();
  trainer.train();
  return seconds / static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 5;
  const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 200;
  auto data = make_data();
  const trainhook::PluginRegistry registry(trainhook::PluginSearchOptions{});
  const bool have = registry.has("grad_stats") && registry.has("ema");
  std::vector<double> plain, stats, ema, views;
  run(data, steps / 4, "");  // warm-up
  for (int r = 0; r < repeats; ++r) {
    double us = 0;
    plain.push_back(run(data, steps, "", &us));
    views.push_back(us);
    if (have) {
      stats.push_back(run(data, steps, "grad_stats"));
      ema.push_back(run(data, steps, "ema"));
    }
  }
  const double p = median(plain), v = median(views);
  std::printf("\nMLP %lld-%lld-%lld-%lld (%.2f M parameters), batch %lld, %lld steps, %d repeats, medians:\n",
              static_cast<long long>(kFeatures), static_cast<long long>(kHidden),
              static_cast<long long>(kHidden), static_cast<long long>(kClasses),
              static_cast<double>(kFeatures * kHidden + kHidden + kHidden * kHidden + kHidden +
                                  kHidden * kClasses + kClasses) /
                  1e6,
              static_cast<long long>(kBatch), static_cast<long long>(steps), repeats);
  std::printf("  tensors() views, one call  %8.3f us   (target <= 5 us) %s\n", v,
              v <= 5 ? "ok" : "ABOVE TARGET");
  std::printf("  trainer step, no callback  %8.1f us\n", p * 1e6);
  if (!have) {
    std::printf("  grad_stats / ema: not measured (plugins not found in %s)\n",
                trainhook::default_plugin_dir().string().c_str());
    return 0;
  }
  const double s = median(stats), e = median(ema);
  std::printf("  grad_stats every step      %8.1f us   ratio %.3f (target <= 1.02) %s\n", s * 1e6, s / p,
              s / p <= 1.02 ? "ok" : "ABOVE TARGET");
  std::printf("  ema every step             %8.1f us   ratio %.3f (target <= 1.05) %s\n", e * 1e6, e / p,
              e / p <= 1.05 ? "ok" : "ABOVE TARGET");
  return 0;
}
