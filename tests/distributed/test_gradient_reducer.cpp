// average_gradients and GradientReducer on two ranks in one process: the
// gradients each rank ends with are the mean of both ranks' gradients, on the
// last micro-step of an accumulation window only, in one bucket or many, and
// the reducer that overlaps backward gives what averaging after backward gives.
#include "two_ranks.hpp"

#include <trainhook/distributed/gradient_reducer.hpp>

#include <torch/torch.h>

#include <doctest/doctest.h>

#include <vector>

using trainhook::distributed::GradientReducer;
using trainhook::distributed::ProcessGroup;
using trainhook::test::on_two_ranks;

namespace {

// The same small network on every rank (same seed), with a layer that takes no
// part in the forward pass (its parameters get no gradient). Built on the main
// thread: the ranks' threads would race for the global generator.
struct Net {
  torch::nn::Linear first{nullptr}, second{nullptr}, unused{nullptr};
  std::vector<torch::Tensor> params;
  Net() {
    torch::manual_seed(3);
    first = torch::nn::Linear(5, 8);
    second = torch::nn::Linear(8, 3);
    unused = torch::nn::Linear(2, 2);
    for (auto* m : {&first, &second, &unused}) {
      for (const auto& p : (*m)->parameters()) params.push_back(p);
    }
  }
  torch::Tensor loss(const torch::Tensor& x) { return second(torch::tanh(first(x))).pow(2).mean(); }
  std::vector<torch::Tensor> grads() const {
    std::vector<torch::Tensor> g;
    for (const auto& p : params) g.push_back(p.grad().defined() ? p.grad().clone() : torch::Tensor());
    return g;
  }
};

// Each rank's batch: different data, so the ranks' gradients differ.
torch::Tensor batch_of(int rank, int micro_step) {
  return torch::linspace(-1.0 + rank + 0.3 * micro_step, 1.0 + 2 * rank, 20).reshape({4, 5});
}

// The reference: what the mean over both ranks of `micro_steps` backward passes gives,
// computed in one process.
std::vector<torch::Tensor> expected_mean(int micro_steps) {
  std::vector<torch::Tensor> sum;
  for (int rank = 0; rank < 2; ++rank) {
    Net net;
    for (int s = 0; s < micro_steps; ++s) net.loss(batch_of(rank, s)).backward();
    const auto g = net.grads();
    if (sum.empty()) {
      sum = g;
    } else {
      for (size_t i = 0; i < g.size(); ++i) {
        if (g[i].defined()) sum[i] = sum[i] + g[i];
      }
    }
  }
  for (auto& t : sum) {
    if (t.defined()) t = t * 0.5;
  }
  return sum;
}

void check_same(const std::vector<torch::Tensor>& got, const std::vector<torch::Tensor>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    REQUIRE(got[i].defined() == want[i].defined());
    if (want[i].defined()) CHECK(torch::allclose(got[i], want[i], 1e-6, 1e-7));
  }
}

}  // namespace

TEST_CASE("average_gradients leaves the mean over ranks in .grad and skips parameters without one") {
  std::vector<torch::Tensor> got[2];
  Net nets[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    Net& net = nets[rank];
    net.loss(batch_of(rank, 0)).backward();
    // A small bucket size: several buckets, each one all-reduce.
    trainhook::distributed::average_gradients(*g, net.params, 64);
    got[rank] = net.grads();
  });
  const auto want = expected_mean(1);
  check_same(got[0], want);
  check_same(got[1], want);
  CHECK_FALSE(want.back().defined());  // the unused layer really has no gradient
}

TEST_CASE("GradientReducer averages the gradients of the backward armed as an accumulation boundary") {
  for (const int64_t bucket_bytes : {int64_t{64}, int64_t{25} * 1024 * 1024}) {
    CAPTURE(bucket_bytes);
    std::vector<torch::Tensor> got[2];
    Net nets[2];
    on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
      Net& net = nets[rank];
      GradientReducer reducer(g, net.params, bucket_bytes);
      reducer.arm(true);
      net.loss(batch_of(rank, 0)).backward();
      reducer.finish();
      got[rank] = net.grads();
    });
    const auto want = expected_mean(1);
    check_same(got[0], want);
    check_same(got[1], want);
  }
}

TEST_CASE("GradientReducer leaves the micro-steps before the boundary local and averages their sum") {
  std::vector<torch::Tensor> before[2], after[2];
  Net nets[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    Net& net = nets[rank];
    GradientReducer reducer(g, net.params, 64);
    reducer.arm(false);  // micro-step 1 of 2: no communication
    net.loss(batch_of(rank, 0)).backward();
    reducer.finish();  // not armed: does nothing
    before[rank] = net.grads();
    reducer.arm(true);  // micro-step 2: the window's sum is averaged
    net.loss(batch_of(rank, 1)).backward();
    reducer.finish();
    after[rank] = net.grads();
  });
  // After the first micro-step each rank still holds its own gradient.
  CHECK_FALSE(torch::allclose(before[0][0], before[1][0]));
  const auto want = expected_mean(2);
  check_same(after[0], want);
  check_same(after[1], want);
}

TEST_CASE("GradientReducer gives what average_gradients gives, window after window") {
  std::vector<torch::Tensor> overlapped[2], after_backward[2];
  Net as[2], bs[2];
  on_two_ranks([&](int rank, const std::shared_ptr<ProcessGroup>& g) {
    Net& a = as[rank];
    Net& b = bs[rank];
    GradientReducer reducer(g, a.params, 64);
    for (int window = 0; window < 3; ++window) {
      for (auto* net : {&a, &b}) {
        for (const auto& p : net->params) p.mutable_grad() = torch::Tensor();
      }
      reducer.arm(true);
      a.loss(batch_of(rank, window)).backward();
      reducer.finish();
      b.loss(batch_of(rank, window)).backward();
      trainhook::distributed::average_gradients(*g, b.params, 64);
    }
    overlapped[rank] = a.grads();
    after_backward[rank] = b.grads();
  });
  for (int r = 0; r < 2; ++r) {
    REQUIRE(overlapped[r].size() == after_backward[r].size());
    for (size_t i = 0; i < overlapped[r].size(); ++i) {
      REQUIRE(overlapped[r][i].defined() == after_backward[r][i].defined());
      if (overlapped[r][i].defined()) CHECK(torch::equal(overlapped[r][i], after_backward[r][i]));
    }
  }
}
