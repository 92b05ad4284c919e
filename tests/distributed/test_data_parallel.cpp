// The data-parallel seam: SingleProcess changes nothing, MultiProcess (two
// ranks in one process over 127.0.0.1) agrees on TrainerControl, averages
// numbers and gradients, gathers rows and RNG states, and make_data_parallel
// picks one and fixes the ranks in the arguments.
#include "two_ranks.hpp"

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/callbacks/state.hpp>
#include <trainhook/distributed/data_parallel.hpp>
#include <trainhook/distributed/make_data_parallel.hpp>
#include <trainhook/distributed/multi_process.hpp>
#include <trainhook/distributed/single_process.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <torch/torch.h>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

using trainhook::TrainerControl;
using trainhook::distributed::GradientReduction;
using trainhook::distributed::MultiProcess;
using trainhook::distributed::ProcessGroup;
using trainhook::distributed::SingleProcess;
using trainhook::test::on_two_ranks;

namespace {

// Built on the main thread (the global generator is not for two threads at once).
torch::nn::Linear seeded_layer(uint64_t seed) {
  torch::manual_seed(seed);
  return torch::nn::Linear(3, 2);
}

}  // namespace

TEST_CASE("SingleProcess hands everything back unchanged and runs only a caller's gradient hook") {
  SingleProcess alone;
  CHECK(alone.rank() == 0);
  CHECK(alone.world_size() == 1);
  TrainerControl c;
  c.should_save = true;
  alone.agree_on_control(c);
  CHECK(c.should_save);
  CHECK_FALSE(c.should_log);
  CHECK(alone.mean_over_ranks(2.5) == 2.5);
  CHECK(alone.sum_over_ranks(2.5, "x") == 2.5);
  const auto rows = torch::ones({2, 3});
  CHECK(alone.gather_rows(rows, "x").is_same(rows));
  CHECK(alone.gather_rng_states().empty());
  CHECK(alone.rank0_value("out/checkpoint-5", "x") == "out/checkpoint-5");
  CHECK(alone.rng_state_file() == trainhook::kRngStateFile);
  alone.before_backward(true);
  alone.reduce_gradients();
  alone.barrier("x");

  int calls = 0;
  SingleProcess hooked([&] { ++calls; });
  hooked.reduce_gradients();
  CHECK(calls == 1);
}

TEST_CASE("MultiProcess: a TrainerControl flag set on one rank holds on every rank") {
  std::vector<TrainerControl> got(2);
  double means[2] = {0, 0}, sums[2] = {0, 0};
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    MultiProcess dp(g, *layers[rank], GradientReduction::overlap_with_backward);
    TrainerControl c;
    if (rank == 0) c.should_save = true;
    if (rank == 1) c.should_training_stop = true;
    dp.agree_on_control(c);
    got[rank] = c;
    means[rank] = dp.mean_over_ranks(rank == 0 ? 1.0 : 4.0);
    sums[rank] = dp.sum_over_ranks(rank == 0 ? 1.0 : 4.0, "test sum");
  });
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(got[r].should_save);
    CHECK(got[r].should_training_stop);
    CHECK_FALSE(got[r].should_epoch_stop);
    CHECK_FALSE(got[r].should_evaluate);
    CHECK_FALSE(got[r].should_log);
    CHECK(means[r] == 2.5);
    CHECK(sums[r] == 5.0);
  }
}

TEST_CASE("MultiProcess: rank 0's value reaches every rank, whatever the others hold") {
  // The resume checkpoint a rank-0 integration (flyte's restore) picked.
  const std::string picked = "out/checkpoint-15 \xc3\xa9";  // any bytes, not only ASCII
  std::string got[2][2];
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    MultiProcess dp(g, *layers[rank], GradientReduction::after_backward);
    got[rank][0] = dp.rank0_value(rank == 0 ? picked : "", "test value");
    got[rank][1] = dp.rank0_value(rank == 0 ? "" : "rank 1's own", "test value");
  });
  for (int r = 0; r < 2; ++r) {
    CAPTURE(r);
    CHECK(got[r][0] == picked);
    CHECK(got[r][1].empty());
  }
}

TEST_CASE("MultiProcess starts every rank from rank 0's parameters") {
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  const auto rank0_weight = layers[0]->weight.detach().clone();
  REQUIRE_FALSE(torch::equal(rank0_weight, layers[1]->weight.detach()));
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    MultiProcess dp(g, *layers[rank], GradientReduction::after_backward);
  });
  CHECK(torch::equal(layers[1]->weight.detach(), rank0_weight));
  CHECK(torch::equal(layers[1]->bias.detach(), layers[0]->bias.detach()));
}

TEST_CASE("MultiProcess averages gradients both ways, or runs the caller's hook instead") {
  for (const auto reduction : {GradientReduction::overlap_with_backward, GradientReduction::after_backward}) {
    CAPTURE(static_cast<int>(reduction));
    torch::Tensor grads[2];
    torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
    on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
      MultiProcess dp(g, *layers[rank], reduction);
      dp.before_backward(true);
      // Rank r's loss is (r + 1) * sum(w): its weight gradient is r + 1 everywhere.
      (layers[rank]->weight.sum() * (rank + 1)).backward();
      dp.reduce_gradients();
      grads[rank] = layers[rank]->weight.grad().clone();
    });
    CHECK(torch::allclose(grads[0], torch::full({2, 3}, 1.5f)));
    CHECK(torch::allclose(grads[1], torch::full({2, 3}, 1.5f)));
  }
  int calls[2] = {0, 0};
  torch::Tensor grads[2];
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    MultiProcess dp(g, *layers[rank], GradientReduction::overlap_with_backward, [&, rank] { ++calls[rank]; });
    dp.before_backward(true);
    (layers[rank]->weight.sum() * (rank + 1)).backward();
    dp.reduce_gradients();
    grads[rank] = layers[rank]->weight.grad().clone();
  });
  CHECK(calls[0] == 1);
  CHECK(calls[1] == 1);
  CHECK(torch::allclose(grads[1], torch::full({2, 3}, 2.0f)));  // not averaged
}

TEST_CASE("MultiProcess gathers evaluation rows and every rank's RNG state in rank order") {
  torch::Tensor rows[2];
  std::vector<torch::Tensor> states[2];
  std::string files[2];
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    MultiProcess dp(g, *layers[rank], GradientReduction::overlap_with_backward);
    rows[rank] = dp.gather_rows(torch::full({rank + 1, 2}, static_cast<float>(rank)), "test rows");
    states[rank] = dp.gather_rng_states();
    files[rank] = dp.rng_state_file();
    dp.barrier("test done");
  });
  CHECK(torch::equal(rows[0], torch::tensor({{0.f, 0.f}, {1.f, 1.f}, {1.f, 1.f}})));
  CHECK(torch::equal(rows[1], rows[0]));
  // Both threads share this process's generator, so both states are its state.
  const auto mine = trainhook::cpu_rng_state();
  for (int r = 0; r < 2; ++r) {
    REQUIRE(states[r].size() == 2);
    CHECK(torch::equal(states[r][0], mine));
    CHECK(torch::equal(states[r][1], mine));
  }
  CHECK(files[0] == "rng_state_0.pth");
  CHECK(files[1] == "rng_state_1.pth");
}

TEST_CASE("make_data_parallel: one process, a given group, or an error naming the launcher variables") {
  auto layer = seeded_layer(1);
  trainhook::TrainingArguments single;
  const auto alone = trainhook::distributed::make_data_parallel(single, *layer, {});
  CHECK(dynamic_cast<SingleProcess*>(alone.get()) != nullptr);
  CHECK(single.world_size == 1);

  trainhook::TrainingArguments args[2];
  int sizes[2] = {0, 0};
  torch::nn::Linear layers[2] = {seeded_layer(1), seeded_layer(2)};
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    trainhook::distributed::DataParallelOptions o;
    o.process_group = g;
    sizes[rank] = trainhook::distributed::make_data_parallel(args[rank], *layers[rank], o)->world_size();
  });
  for (int r = 0; r < 2; ++r) {
    CHECK(sizes[r] == 2);
    CHECK(args[r].process_index == r);
    CHECK(args[r].world_size == 2);
    CHECK(args[r].local_rank == r);
  }

  // world_size 2 but no launcher environment (this test runs without RANK/WORLD_SIZE).
  trainhook::TrainingArguments two;
  two.world_size = 2;
  two.process_index = 1;
  try {
    trainhook::distributed::make_data_parallel(two, *layer, {});
    FAIL("no error for world_size 2 without a launcher");
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    CHECK(m.find("world_size 2 / process_index 1") != std::string::npos);
    CHECK(m.find("RANK=0 WORLD_SIZE=1") != std::string::npos);
  }
}
