// Background batch preparation: the same batches in the same order whatever
// the worker count, bounded look-ahead, and a worker's error surfacing on the
// taking thread with the batch, sample index and file.
#include <trainhook/data/batch_prefetcher.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>

using namespace trainhook;

namespace {

std::vector<torch::Tensor> batches_of(int64_t n, int64_t batch) {
  std::vector<torch::Tensor> out;
  const auto perm = torch::randperm(n, torch::kLong);
  for (int64_t s = 0; s < n; s += batch) out.push_back(perm.narrow(0, s, std::min(batch, n - s)));
  return out;
}

}  // namespace

TEST_CASE("every worker count gives the batches of 0 workers in order") {
  torch::manual_seed(5);
  std::vector<DatasetShard> shards{{{{"x", torch::randn({30, 3})}, {"y", torch::arange(30)}}, "a.npy"},
                                   {{{"x", torch::randn({20, 3})}, {"y", torch::arange(20)}}, "b.npy"}};
  TensorDataset ds(std::move(shards), "x", "y");
  // A costly per-batch step whose result depends on the indices only.
  ds.add_batch_hook([](Batch& b, const torch::Tensor& idx, const TensorDataset&) {
    b.inputs = b.inputs + idx.to(torch::kFloat).unsqueeze(1) * 0.5;
  });
  const auto batches = batches_of(50, 4);
  std::vector<Batch> reference;
  {
    BatchPrefetcher p(ds, batches, 0, 0, 1);
    for (size_t i = 0; i < batches.size(); ++i) reference.push_back(p.take(static_cast<int64_t>(i)));
  }
  for (int64_t workers : {1, 2, 3}) {
    CAPTURE(workers);
    BatchPrefetcher p(ds, batches, 2, workers, workers * 2);
    for (size_t i = 2; i < batches.size(); ++i) {
      const Batch b = p.take(static_cast<int64_t>(i));
      CHECK(torch::equal(b.inputs, reference[i].inputs));
      CHECK(torch::equal(b.labels, reference[i].labels));
    }
  }
}

TEST_CASE("workers stay within the prefetch depth and stop early without hanging") {
  TensorDataset ds(torch::arange(100).reshape({100, 1}), torch::arange(100));
  std::atomic<int> built{0};
  ds.add_batch_hook([&](Batch&, const torch::Tensor&, const TensorDataset&) { ++built; });
  const auto batches = batches_of(100, 5);
  BatchPrefetcher p(ds, batches, 0, 2, 3);
  (void)p.take(0);
  // At most take + depth batches were claimed: 1 taken + 3 ahead.
  CHECK(built.load() <= 4);
}  // the destructor stops the workers with batches left

TEST_CASE("a worker's error surfaces on the taking thread with the sample index and file") {
  std::vector<DatasetShard> shards{{{{"x", torch::zeros({8, 2})}, {"y", torch::zeros({8})}}, "first.npy"},
                                   {{{"x", torch::zeros({8, 2})}, {"y", torch::zeros({8})}}, "second.npy"}};
  TensorDataset ds(std::move(shards), "x", "y");
  ds.add_batch_hook([](Batch&, const torch::Tensor& idx, const TensorDataset&) {
    if (idx[0].item<int64_t>() == 11) throw std::runtime_error("bad sample");
  });
  const std::vector<torch::Tensor> batches{torch::tensor({0, 1}, torch::kLong),
                                           torch::tensor({11, 2}, torch::kLong)};
  for (int64_t workers : {0, 2}) {
    BatchPrefetcher p(ds, batches, 0, workers, 4);
    CHECK_NOTHROW(p.take(0));
    CHECK_THROWS_WITH_AS(p.take(1), "data batch 1 (first sample index 11, second.npy sample 3): bad sample",
                         std::runtime_error);
  }
}
