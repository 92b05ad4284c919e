// --max_grad_norm's clipping (optim/grad_clipping.hpp) against LibTorch's
// torch::nn::utils::clip_grad_norm_, the same arithmetic as torch's Python one:
// the same returned norm and bit-identical gradients, clipped or not.
#include <doctest/doctest.h>
#include <trainhook/optim/grad_clipping.hpp>

#include <torch/torch.h>

#include <limits>
#include <vector>

namespace {

// Parameters whose gradients are `scale` times fixed random values; one has none.
std::vector<torch::Tensor> with_gradients(double scale) {
  torch::manual_seed(11);
  std::vector<torch::Tensor> params;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{16, 8}, {8}, {3, 16}, {3}}) {
    auto p = torch::randn(shape).requires_grad_(true);
    p.mutable_grad() = torch::randn(shape) * scale;
    params.push_back(p);
  }
  params.push_back(torch::randn({4}).requires_grad_(true));  // no gradient
  return params;
}

std::vector<torch::Tensor> copies(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  for (const auto& p : params) {
    auto c = p.detach().clone().requires_grad_(true);
    if (p.grad().defined()) c.mutable_grad() = p.grad().clone();
    out.push_back(c);
  }
  return out;
}

void check_same_as_torch(double scale, double max_norm) {
  auto ours = with_gradients(scale);
  auto theirs = copies(ours);
  const double got = trainhook::clip_grad_norm(ours, max_norm);
  const double expected = torch::nn::utils::clip_grad_norm_(theirs, max_norm);
  if (std::isnan(expected)) {
    CHECK(std::isnan(got));
  } else {
    CHECK(got == expected);
  }
  for (size_t i = 0; i < ours.size(); ++i) {
    CAPTURE(i);
    REQUIRE(ours[i].grad().defined() == theirs[i].grad().defined());
    if (ours[i].grad().defined()) CHECK(torch::equal(ours[i].grad(), theirs[i].grad()));
  }
}

}  // namespace

TEST_CASE("clip_grad_norm: below max_norm the gradients are untouched and the norm is torch's") {
  auto params = with_gradients(0.01);
  const auto before = copies(params);
  const double norm = trainhook::clip_grad_norm(params, 1.0);
  CHECK(norm > 0.0);
  CHECK(norm < 1.0);
  for (size_t i = 0; i < 4; ++i) CHECK(torch::equal(params[i].grad(), before[i].grad()));
  check_same_as_torch(0.01, 1.0);
}

TEST_CASE("clip_grad_norm: above max_norm the gradients equal torch's clipped ones bit for bit") {
  check_same_as_torch(10.0, 1.0);
  auto params = with_gradients(10.0);
  trainhook::clip_grad_norm(params, 1.0);
  std::vector<torch::Tensor> norms;
  for (size_t i = 0; i < 4; ++i) norms.push_back(params[i].grad().norm());
  CHECK(torch::stack(norms).norm().item<double>() == doctest::Approx(1.0).epsilon(1e-5));
}

TEST_CASE("clip_grad_norm: at the edge, and with a non-finite gradient, it does what torch does") {
  // A norm a hair's breadth around max_norm: the factor is 1 or just below, as torch computes it.
  auto probe = with_gradients(1.0);
  const double norm = trainhook::clip_grad_norm(probe, std::numeric_limits<double>::max());
  for (const double max_norm : {norm, norm + 1e-6, norm - 1e-6, norm * (1 + 1e-7)}) {
    CAPTURE(max_norm);
    check_same_as_torch(1.0, max_norm);
  }
  // inf and NaN: torch multiplies by the NaN/0 factor; so must we (no skip hides them).
  for (const double bad :
       {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    CAPTURE(bad);
    auto ours = with_gradients(1.0);
    auto theirs = copies(ours);
    ours[0].mutable_grad()[0][0] = bad;
    theirs[0].mutable_grad()[0][0] = bad;
    const double got = trainhook::clip_grad_norm(ours, 1.0);
    const double expected = torch::nn::utils::clip_grad_norm_(theirs, 1.0);
    CHECK(std::isfinite(got) == std::isfinite(expected));
    for (size_t i = 0; i < 4; ++i)
      CHECK(torch::allclose(ours[i].grad(), theirs[i].grad(), 0, 0, /*equal_nan=*/true));
  }
}

TEST_CASE("clip_grad_norm: no gradients at all gives 0") {
  std::vector<torch::Tensor> params{torch::randn({3}).requires_grad_(true)};
  CHECK(trainhook::clip_grad_norm(params, 1.0) == 0.0);
  CHECK(trainhook::clip_grad_norm({}, 1.0) == 0.0);
}
