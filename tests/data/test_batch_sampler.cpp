// The sampler's orders: epoch permutations, the epoch-less stream of a token
// file (seeded, recomputable, shared out over ranks) and group_by_length.
#include <trainhook/data/batch_sampler.hpp>

#include <doctest/doctest.h>

#include <set>

using namespace trainhook;

namespace {

SamplerOptions stream(int64_t batch, int64_t batches, int32_t rank = 0, int32_t world = 1) {
  SamplerOptions o;
  o.batch_size = batch;
  o.stream_batches = batches;
  o.seed = 11;
  o.shard = Shard{rank, world};
  return o;
}

}  // namespace

TEST_CASE("a stream draws the same batches for the same seed and others for another") {
  const BatchSampler a(1000, stream(4, 6)), b(1000, stream(4, 6));
  CHECK(a.batches_per_epoch() == 6);
  const auto x = a.epoch_batches(0), y = b.epoch_batches(0);
  REQUIRE(x.size() == 6);
  for (size_t i = 0; i < x.size(); ++i) CHECK(torch::equal(x[i], y[i]));
  auto other = stream(4, 6);
  other.seed = 12;
  CHECK_FALSE(torch::equal(BatchSampler(1000, other).epoch_batches(0)[0], x[0]));
  CHECK(x[0].max().item<int64_t>() < 1000);
  CHECK(x[0].min().item<int64_t>() >= 0);
  // A later batch does not depend on how many come before it (a resumed run).
  CHECK(torch::equal(BatchSampler(1000, stream(4, 9)).epoch_batches(0)[5], x[5]));
}

TEST_CASE("2 ranks with batch B share out exactly what 1 rank with batch 2B draws") {
  const auto one = BatchSampler(500, stream(8, 5)).epoch_batches(0);
  const auto r0 = BatchSampler(500, stream(4, 5, 0, 2)).epoch_batches(0);
  const auto r1 = BatchSampler(500, stream(4, 5, 1, 2)).epoch_batches(0);
  for (size_t i = 0; i < one.size(); ++i) {
    CHECK(torch::equal(one[i].slice(0, 0, 8, 2), r0[i]));
    CHECK(torch::equal(one[i].slice(0, 1, 8, 2), r1[i]));
  }
}

TEST_CASE("group_by_length cuts megabatches sorted longest first as HF does") {
  SamplerOptions o;
  o.batch_size = 2;
  o.seed = 3;
  const int64_t n = 40;
  o.lengths = torch::arange(n, torch::kLong).remainder(13);
  const auto batches = BatchSampler(n, o).epoch_batches(0);
  std::vector<int64_t> order;
  for (const auto& b : batches) {
    for (int64_t i = 0; i < b.numel(); ++i) order.push_back(b[i].item<int64_t>());
  }
  REQUIRE(order.size() == static_cast<size_t>(n));
  CHECK(std::set<int64_t>(order.begin(), order.end()).size() == static_cast<size_t>(n));
  const auto len = [&](size_t i) { return order[i] % 13; };
  CHECK(len(0) == 12);  // the longest sample leads
  // mega = min(40 / (2 × 4), 50) = 5 batches: megabatches of 10, each sorted
  // (the first from its second element on, its head was swapped).
  for (size_t start = 0; start < order.size(); start += 10) {
    for (size_t i = start + (start == 0 ? 2 : 1); i < start + 10; ++i) CHECK(len(i - 1) >= len(i));
  }
  o.lengths = torch::ones({3}, torch::kLong);
  CHECK_THROWS_AS(BatchSampler(n, o), std::invalid_argument);
}
