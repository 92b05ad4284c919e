// One training configuration three ways, in one process, interleaved:
//   raw       a hand-written LibTorch loop doing the same work per step
//             (batch gather, forward, loss, backward, loss.item(), clipping,
//             AdamW step, learning-rate update, zero_grad)
//   trainer   the Trainer with no plugins (DefaultFlowCallback only)
//   progress  the Trainer with the progress plugin (when it is installed)
// Each repeat times the steps of one run; the medians give step times and the
// ratios to raw (target <= 1.02).
//
// usage: bench_trainer_overhead [repeats=7] [steps=400]
#include <bench_harness.hpp>

#include <trainhook/data/batch_sampler.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/optim/lr_schedule.hpp>
#include <trainhook/optim/optimizer_factory.hpp>
#include <trainhook/trainer/options_from_arguments.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <torch/torch.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace {

using namespace trainhook::bench;
constexpr int64_t kHidden = 256;

trainhook::TrainingArguments overhead_args(int64_t steps) {
  auto a = bench_args(steps, temp_output_dir("trainhook-bench-overhead"));
  a.logging_steps = 50;
  return a;
}

double raw_loop(const trainhook::TensorDataset& data, int64_t steps) {
  auto model = make_mlp(kHidden);
  const auto args = overhead_args(steps);
  auto optimizer = trainhook::make_optimizer(trainhook::optimizer_options(args), *model);
  trainhook::LrScheduler scheduler(trainhook::SchedulerType::linear, args.learning_rate, 0, steps);
  trainhook::SamplerOptions so;
  so.batch_size = kBatch;
  trainhook::BatchSampler sampler(data.size(), so);
  auto params = model->parameters();
  model->train();
  double tr_loss = 0;
  const auto start = Clock::now();
  int64_t step = 0;
  for (int64_t epoch = 0; step < steps; ++epoch) {
    for (const auto& idx : sampler.epoch_batches(epoch)) {
      const auto batch = data.get(idx);
      auto loss = model->loss(model->forward(batch.inputs), batch.labels);
      loss.backward();
      tr_loss += loss.item<double>();
      torch::nn::utils::clip_grad_norm_(params, args.max_grad_norm);
      optimizer->step();
      scheduler.step();
      trainhook::set_learning_rate(*optimizer, scheduler.lr());
      optimizer->zero_grad();
      if (++step == steps) break;
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!std::isfinite(tr_loss)) std::fprintf(stderr, "raw loop diverged\n");
  return seconds / static_cast<double>(steps);
}

double trainer_loop(const std::shared_ptr<trainhook::TensorDataset>& data, int64_t steps, bool progress) {
  auto args = overhead_args(steps);
  args.disable_tqdm = !progress;
  double seconds = 0;
  trainhook::TrainerOptions options;
  options.use_plugins = progress;
  options.callbacks.push_back(trainhook::make_callback<Stopwatch>("stopwatch", &seconds));
  trainhook::Trainer trainer(make_mlp(kHidden), args, data, nullptr, std::move(options));
  trainer.train();
  return seconds / static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  (void)trainhook::apply_allocator_policy();  // as the trainhook program (bench_harness.hpp)
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 7;
  const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 400;
  auto data = make_data();
  const bool have_progress = trainhook::PluginRegistry(trainhook::PluginSearchOptions{}).has("progress");
  std::vector<double> raw, plain, prog;
  raw_loop(*data, steps / 4);  // warm-up
  for (int r = 0; r < repeats; ++r) {
    raw.push_back(raw_loop(*data, steps));
    plain.push_back(trainer_loop(data, steps, false));
    if (have_progress) prog.push_back(trainer_loop(data, steps, true));
  }
  const double raw_m = median(raw), plain_m = median(plain);
  std::printf(
      "\nMLP %lld-%lld-%lld-%lld, batch %lld, %lld steps, %d interleaved repeats, median step time:\n",
      static_cast<long long>(kFeatures), static_cast<long long>(kHidden), static_cast<long long>(kHidden),
      static_cast<long long>(kClasses), static_cast<long long>(kBatch), static_cast<long long>(steps),
      repeats);
  std::printf("  raw LibTorch loop        %8.1f us\n", raw_m * 1e6);
  std::printf("  trainer, no plugins      %8.1f us   ratio %.3f (target <= 1.02) %s\n", plain_m * 1e6,
              plain_m / raw_m, plain_m / raw_m <= 1.02 ? "ok" : "ABOVE TARGET");
  if (have_progress) {
    const double prog_m = median(prog);
    std::printf("  trainer, progress plugin %8.1f us   ratio %.3f (target <= 1.02) %s\n", prog_m * 1e6,
                prog_m / raw_m, prog_m / raw_m <= 1.02 ? "ok" : "ABOVE TARGET");
  } else {
    std::printf("  trainer, progress plugin: not measured (no 'progress' plugin in %s)\n",
                trainhook::default_plugin_dir().string().c_str());
  }
  return 0;
}
