// Background batch preparation: the CNN on 16×16 images with a per-batch
// transform (a random crop of the zero-padded image plus Gaussian noise,
// seeded by the batch's indices) costing about as much as the step. Prints the
// steps/s with 0 and 1 dataloader worker and their ratio (target >= 1.5 on 2
// cores), medians of interleaved repeats, and checks both runs end with the
// same weights (the batches do not depend on the worker count).
//
// usage: bench_worker_overlap [repeats=3] [steps=150]
#include <bench_harness.hpp>

#include <trainhook/models/cnn.hpp>
#include <trainhook/trainer/trainer.hpp>

#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <cstdio>
#include <cstdlib>

namespace {

using namespace trainhook;
using namespace trainhook::bench;
constexpr int64_t kSide = 16, kPad = 3, kImages = 2048;

std::shared_ptr<TensorDataset> images(int64_t repeats) {
  torch::manual_seed(3);
  auto x = torch::rand({kImages, kSide * kSide});
  auto y = torch::randint(10, {kImages}, torch::kLong);
  auto ds = std::make_shared<TensorDataset>(x, y, "images");
  // Per sample: crop a random kSide window of the padded image, add noise;
  // `repeats` passes make it cost about one step. Seeded by the indices only.
  ds->add_batch_hook([repeats](Batch& b, const torch::Tensor& idx, const TensorDataset&) {
    const auto seed = static_cast<uint64_t>(idx.sum().item<int64_t>() * 7919 + idx[0].item<int64_t>());
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    auto img = b.inputs.reshape({-1, 1, kSide, kSide});
    for (int64_t r = 0; r < repeats; ++r) {
      const auto padded = torch::constant_pad_nd(img, {kPad, kPad, kPad, kPad});
      std::vector<torch::Tensor> out;
      const auto offsets = torch::randint(2 * kPad + 1, {img.size(0), 2}, gen, torch::kLong);
      const auto acc = offsets.accessor<int64_t, 2>();
      for (int64_t i = 0; i < img.size(0); ++i)
        out.push_back(padded[i].narrow(1, acc[i][0], kSide).narrow(2, acc[i][1], kSide));
      img = torch::stack(out) + 0.01 * torch::randn(img.sizes(), gen);
    }
    b.inputs = img.reshape({-1, kSide * kSide}).contiguous();
  });
  return ds;
}

std::pair<double, torch::Tensor> run(const std::shared_ptr<TensorDataset>& data, int64_t steps,
                                     int64_t workers) {
  auto args = bench_args(steps, temp_output_dir("trainhook-bench-overlap"));
  args.dataloader_num_workers = workers;
  args.dataloader_pin_memory = false;
  double seconds = 0;
  TrainerOptions options;
  options.use_plugins = false;
  options.callbacks.push_back(make_callback<Stopwatch>("stopwatch", &seconds));
  torch::manual_seed(1);
  CnnOptions o;
  o.image_size = kSide;
  o.num_classes = 10;
  auto model = std::make_shared<CnnModel>(o);
  Trainer trainer(model, args, data, nullptr, std::move(options));
  trainer.train();
  return {static_cast<double>(steps) / seconds, model->parameters()[0].detach().clone()};
}

}  // namespace

int main(int argc, char** argv) {
  (void)trainhook::apply_allocator_policy();  // as the trainhook program (bench_harness.hpp)
  const int64_t repeats = argc > 1 ? std::atoll(argv[1]) : 3;
  const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 150;
  torch::set_num_threads(1);
  // Calibrate: transform passes so that preparing a batch costs about one step.
  const auto plain = std::make_shared<TensorDataset>(images(0)->inputs(), images(0)->labels());
  const double step_rate = run(plain, 30, 0).first;
  const auto probe = images(1);
  const auto t0 = Clock::now();
  for (int64_t i = 0; i < 20; ++i)
    (void)probe->get(torch::randperm(kImages, torch::kLong).narrow(0, 0, kBatch));
  const double pass = std::chrono::duration<double>(Clock::now() - t0).count() / 20;
  const int64_t passes = std::max<int64_t>(1, static_cast<int64_t>(1.0 / step_rate / pass + 0.5));
  const auto data = images(passes);
  std::vector<double> zero, one;
  torch::Tensor w0, w1;
  for (int64_t r = 0; r < repeats; ++r) {
    auto a = run(data, steps, 0);
    auto b = run(data, steps, 1);
    zero.push_back(a.first);
    one.push_back(b.first);
    w0 = a.second;
    w1 = b.second;
  }
  const bool same = torch::equal(w0, w1);
  std::printf("transform passes %lld (a pass %.2f ms, a plain step %.2f ms)\n",
              static_cast<long long>(passes), pass * 1e3, 1e3 / step_rate);
  std::printf("steps/s 0 workers %.2f, 1 worker %.2f\n", median(zero), median(one));
  std::printf("worker_overlap_ratio %.3f\n", median(one) / median(zero));
  std::printf("same weights %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}
