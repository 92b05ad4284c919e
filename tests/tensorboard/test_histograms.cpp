// histogram_of over borrowed DLPack views: the element loop is plugins/support's
// for_each_value, so a strided view gives the histogram of its elements, and a
// view it cannot read fails naming the plugin and the tensor.
#include <trainhook/tensorboard/histograms.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

using trainhook::TensorView;
using trainhook::tensorboard::Histogram;
using trainhook::tensorboard::histogram_of;

namespace {

DLTensor view_of(float* data, int64_t* shape, int64_t* strides) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  t.strides = strides;
  return t;
}

}  // namespace

TEST_CASE("a strided view gives the histogram of its elements, like the same values contiguous") {
  // 2x3 row-major: 1 2 3 / -4 5 1e-13; its transpose (3x2, strides 1,3) and a copy of that transpose.
  std::vector<float> m{1, 2, 3, -4, 5, 1e-13f};
  int64_t tshape[2] = {3, 2}, tstrides[2] = {1, 3};
  const DLTensor transposed = view_of(m.data(), tshape, tstrides);
  std::vector<float> copy{1, -4, 2, 5, 3, 1e-13f};
  int64_t cshape[2] = {3, 2}, cstrides[2] = {2, 1};
  const DLTensor contiguous = view_of(copy.data(), cshape, cstrides);

  const Histogram a = histogram_of(TensorView("w.t", &transposed));
  const Histogram b = histogram_of(TensorView("w", &contiguous));
  CHECK(a.num == 6);
  CHECK(a.min == -4);
  CHECK(a.max == 5);
  CHECK(a.sum == doctest::Approx(7.0));
  CHECK(a.sum_squares == doctest::Approx(55.0));
  CHECK(a.min == b.min);
  CHECK(a.max == b.max);
  CHECK(a.sum == b.sum);
  CHECK(a.bucket_limit == b.bucket_limit);
  CHECK(a.bucket == b.bucket);
  double total = 0;
  for (double c : a.bucket) total += c;
  CHECK(total == 6);
}

TEST_CASE("an undefined view has an empty histogram, a float16 view fails naming the plugin and tensor") {
  std::vector<float> m{1, 2};
  int64_t shape[2] = {1, 2}, strides[2] = {2, 1};
  DLTensor absent = view_of(nullptr, shape, strides);  // a gradient that does not exist
  CHECK(histogram_of(TensorView("fc.bias", &absent)).num == 0);
  DLTensor half = view_of(m.data(), shape, strides);
  half.dtype = {kDLFloat, 16, 1};
  CHECK_THROWS_WITH_AS(
      histogram_of(TensorView("fc.weight", &half)),
      doctest::Contains("tensorboard histograms: tensor 'fc.weight' is not a float32/float64"),
      std::runtime_error);
}
