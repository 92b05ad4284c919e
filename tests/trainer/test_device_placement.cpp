// Device choice and autocast (trainer/device_placement.hpp): --bf16 runs a
// forward in bfloat16 and restores float32 after; flags this machine cannot
// serve are refused naming them. GPU cases run only where LibTorch sees one.
#include "trainer_test_support.hpp"

#include <doctest/doctest.h>
#include <trainhook/common/errors.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/trainer/device_placement.hpp>

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/torch.h>

using trainhook::AutocastScope;
using trainhook::TrainingArguments;

TEST_CASE(
    "AutocastScope: a Linear on the CPU computes in bfloat16 inside, float32 outside, nesting restores") {
  torch::manual_seed(0);
  torch::nn::Linear layer(8, 4);
  const auto x = torch::randn({2, 8});
  CHECK((layer(x).scalar_type() == torch::kFloat));
  {
    const AutocastScope outer(c10::DeviceType::CPU, c10::ScalarType::BFloat16);
    CHECK((layer(x).scalar_type() == torch::kBFloat16));
    {
      const AutocastScope inner(c10::DeviceType::CPU, std::nullopt);  // float32 run: does nothing
      CHECK((layer(x).scalar_type() == torch::kBFloat16));
    }
    {
      const AutocastScope again(c10::DeviceType::CPU, c10::ScalarType::BFloat16);
      CHECK((layer(x).scalar_type() == torch::kBFloat16));
    }
    CHECK((layer(x).scalar_type() == torch::kBFloat16));  // the inner scope left the outer one on
  }
  CHECK((layer(x).scalar_type() == torch::kFloat));
  CHECK((layer->weight.scalar_type() == torch::kFloat));  // master weights stay float32
  {
    const AutocastScope none(c10::DeviceType::CPU, std::nullopt);
    CHECK((layer(x).scalar_type() == torch::kFloat));
  }
}

TEST_CASE("choose_device and autocast_dtype follow --use_cpu, --bf16 and --fp16") {
  TrainingArguments a;
  CHECK_FALSE(trainhook::autocast_dtype(a).has_value());
  a.bf16 = true;
  CHECK((trainhook::autocast_dtype(a) == c10::ScalarType::BFloat16));
  a.use_cpu = true;
  CHECK(trainhook::choose_device(a).is_cpu());
  a.fp16 = true;
  CHECK_THROWS_WITH_AS(trainhook::choose_device(a), doctest::Contains("--bf16 and --fp16"),
                       trainhook::ArgumentError);
  a.bf16 = false;
  CHECK_THROWS_WITH_AS(trainhook::choose_device(a),
                       doctest::Contains("--fp16 needs a CUDA GPU and --use_cpu"), trainhook::ArgumentError);
  a.use_cpu = false;
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA GPU for this LibTorch: the GPU cases are skipped");
    CHECK_THROWS_WITH_AS(trainhook::choose_device(a), doctest::Contains("on the CPU use --bf16"),
                         trainhook::ArgumentError);
    a.fp16 = false;
    CHECK(trainhook::choose_device(a).is_cpu());
    return;
  }
  a.local_rank = -1;
  CHECK((trainhook::choose_device(a) == c10::Device(c10::DeviceType::CUDA, 0)));  // --fp16 on CUDA
  a.fp16 = false;
  CHECK((trainhook::choose_device(a) == c10::Device(c10::DeviceType::CUDA, 0)));
  a.local_rank = static_cast<int32_t>(torch::cuda::device_count());
  CHECK_THROWS_WITH_AS(trainhook::choose_device(a), doctest::Contains("GPU(s)"), trainhook::ArgumentError);
}

TEST_CASE("to_device leaves a CPU batch as it is") {
  trainhook::Batch b;
  b.inputs = torch::ones({2, 3});
  b.labels = torch::zeros({2}, torch::kLong);
  const auto same = trainhook::to_device(b, c10::Device(c10::DeviceType::CPU));
  CHECK(same.inputs.is_same(b.inputs));
  CHECK(same.labels.is_same(b.labels));
  if (torch::cuda::is_available()) {
    const auto moved = trainhook::to_device(b, c10::Device(c10::DeviceType::CUDA, 0));
    CHECK(moved.inputs.is_cuda());
    CHECK(moved.labels.is_cuda());
  }
}

TEST_CASE(
    "--fp16 on CUDA trains with loss scaling: the logs count skipped steps, checkpoints hold scaler.json") {
  if (!torch::cuda::is_available()) {
    MESSAGE("no CUDA GPU for this LibTorch: the --fp16 training case is skipped");
    return;
  }
  trainhook::test::TempDir dir("trainhook-fp16-cuda");
  auto args = trainhook::test::small_args(dir.path.string());
  args.fp16 = true;
  args.max_steps = 6;
  args.logging_steps = 2;
  args.save_strategy = trainhook::SaveStrategy::steps;
  args.save_steps = 3;
  trainhook::Trainer trainer(trainhook::test::tiny_model(1), args, trainhook::test::synthetic_data(64),
                             nullptr, trainhook::test::plugin_free());
  trainer.train();
  const auto& h = trainer.state().log_history;
  REQUIRE_FALSE(h.empty());
  CHECK(h[0].contains("skipped_steps"));
  CHECK(h[0]["loss_scale"].get<double>() > 0);
  CHECK(std::filesystem::exists(dir.path / "checkpoint-3" / "scaler.json"));
  for (const auto& p : trainer.model().module().parameters()) {
    CHECK((p.scalar_type() == torch::kFloat));  // master weights stay float32
    CHECK(torch::isfinite(p).all().item<bool>());
  }
}
