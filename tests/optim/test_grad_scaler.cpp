// The loss scaler of --fp16 (optim/grad_scaler.hpp), on the CPU: it is
// device-agnostic tensor arithmetic, so its rules are checked here where no GPU
// is; the trainer enables it only for --fp16 on CUDA.
#include <doctest/doctest.h>
#include <temp_dir.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/optim/grad_scaler.hpp>

#include <torch/torch.h>

#include <filesystem>
#include <limits>

using trainhook::GradScaler;
using trainhook::GradScalerOptions;

namespace {
// Gradients of sum(w * x) for a scaled loss: the unscaled gradient is x.
std::vector<torch::Tensor> backward_through(const GradScaler& scaler, const torch::Tensor& x) {
  auto w = torch::zeros_like(x).requires_grad_(true);
  scaler.scale((w * x).sum()).backward();
  return {w};
}
}  // namespace

TEST_CASE("GradScaler: disabled, it changes nothing") {
  GradScaler off(false);
  const auto loss = torch::tensor(3.0);
  CHECK(off.scale(loss).is_same(loss));
  auto params = backward_through(off, torch::tensor({1.0f, 2.0f}));
  CHECK_FALSE(off.unscale(params));
  CHECK(torch::equal(params[0].grad(), torch::tensor({1.0f, 2.0f})));
  off.update(true);
  CHECK(off.skipped_steps() == 0);
  CHECK(off.current_scale() == 65536.0);
}

TEST_CASE("GradScaler: backward of the scaled loss, then unscale, gives the true gradients exactly") {
  GradScaler scaler(true);
  const auto x = torch::tensor({0.5f, -3.0f, 1e-6f});
  auto params = backward_through(scaler, x);
  CHECK(torch::equal(params[0].grad(), x * 65536.0f));  // scaled: what float16 would not underflow
  CHECK_FALSE(scaler.unscale(params));
  CHECK(torch::equal(params[0].grad(), x));  // a power of two: exact
  CHECK(scaler.scale(torch::tensor(2.0)).item<double>() == 131072.0);
}

TEST_CASE("GradScaler: an inf or NaN gradient is found, the scale halves and the step counts as skipped") {
  GradScaler scaler(true, GradScalerOptions().set_init_scale(1024).set_growth_interval(3));
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    auto good = backward_through(scaler, torch::tensor({1.0f}));
    auto broken = backward_through(scaler, torch::tensor({1.0f, bad}));
    std::vector<torch::Tensor> params{good[0], broken[0]};
    CHECK(scaler.unscale(params));
    scaler.update(true);
  }
  CHECK(scaler.current_scale() == 256.0);
  CHECK(scaler.skipped_steps() == 2);
  auto no_grad = torch::zeros({2}).requires_grad_(true);  // a parameter without a gradient is passed over
  CHECK_FALSE(scaler.unscale({no_grad}));
}

TEST_CASE(
    "GradScaler: the scale doubles after growth_interval clean steps in a row, an overflow restarts the "
    "count") {
  GradScaler scaler(true, GradScalerOptions().set_init_scale(8).set_growth_interval(3));
  scaler.update(false);
  scaler.update(false);
  scaler.update(true);  // 8 -> 4, count restarts
  scaler.update(false);
  scaler.update(false);
  CHECK(scaler.current_scale() == 4.0);
  scaler.update(false);
  CHECK(scaler.current_scale() == 8.0);
  CHECK(scaler.skipped_steps() == 1);

  GradScaler top(
      true, GradScalerOptions().set_init_scale(std::numeric_limits<float>::max()).set_growth_interval(1));
  top.update(false);  // torch never grows the scale to inf
  CHECK(top.current_scale() == static_cast<double>(std::numeric_limits<float>::max()));
}

TEST_CASE("GradScaler: state has torch's keys, round-trips, and a bad state names the file and key") {
  GradScaler a(true, GradScalerOptions().set_init_scale(64).set_growth_interval(5));
  a.update(false);
  a.update(false);
  a.update(true);
  a.update(false);
  const auto s = a.state();
  for (const char* key : {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"})
    CHECK_MESSAGE(s.contains(key), key);
  GradScaler b(true, GradScalerOptions().set_growth_interval(5));
  b.load_state(s, "ckpt/scaler.json");
  CHECK(b.current_scale() == 32.0);
  CHECK(b.skipped_steps() == 1);
  for (int i = 0; i < 4; ++i) b.update(false);  // one clean step already counted: 4 more grow it
  CHECK(b.current_scale() == 64.0);

  auto bad = s;
  bad["scale"] = 0;
  CHECK_THROWS_WITH(b.load_state(bad, "ckpt/scaler.json"),
                    doctest::Contains("ckpt/scaler.json: key 'scale' must be a finite value > 0"));
  bad.erase("scale");
  CHECK_THROWS_WITH(b.load_state(bad, "ckpt/scaler.json"), doctest::Contains("key 'scale' must be a number"));
  CHECK_THROWS_AS(GradScaler(true, GradScalerOptions().set_backoff_factor(1.0)), std::invalid_argument);
  CHECK_THROWS_AS(GradScaler(true, GradScalerOptions().set_growth_interval(0)), std::invalid_argument);
}

TEST_CASE("GradScaler: an enabled scaler is saved as scaler.json in a checkpoint and restored from it") {
  namespace fs = std::filesystem;
  const trainhook::testkit::TempDir tmp("trainhook_test_grad_scaler_ckpt");
  const fs::path& dir = tmp.path;
  torch::nn::Linear layer(2, 1);
  torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(0.1));
  trainhook::LrScheduler schedule(trainhook::SchedulerType::linear, 0.1, 0, 10);
  trainhook::TrainerState state;
  GradScaler saved(true, GradScalerOptions().set_init_scale(512));
  saved.update(true);
  trainhook::CheckpointContents contents;
  contents.module = layer.ptr().get();
  contents.optimizer = &sgd;
  contents.scheduler = &schedule;
  contents.state = &state;
  contents.training_args_json = "{}";
  contents.scaler = &saved;
  trainhook::write_checkpoint_files(dir, contents);
  REQUIRE(fs::exists(dir / trainhook::kScalerFile));

  GradScaler restored(true);
  trainhook::load_checkpoint_weights(dir, *layer, sgd, schedule, &restored);
  CHECK(restored.current_scale() == 256.0);
  CHECK(restored.skipped_steps() == 1);

  // A checkpoint saved without --fp16 has none: the scaler keeps its initial scale.
  GradScaler disabled(false);
  contents.scaler = &disabled;
  fs::remove_all(dir);
  fs::create_directories(dir);
  trainhook::write_checkpoint_files(dir, contents);
  CHECK_FALSE(fs::exists(dir / trainhook::kScalerFile));
  GradScaler fresh(true);
  trainhook::load_checkpoint_weights(dir, *layer, sgd, schedule, &fresh);
  CHECK(fresh.current_scale() == 65536.0);
}
