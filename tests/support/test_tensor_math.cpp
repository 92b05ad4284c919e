// The per-step loops the training-health plugins share (plugins/support
// tensor_math): the contiguous fast paths (blocked float sums, AVX2 clones) agree
// with a long-double reference and, where the result must be exact (the EMA
// update), bit for bit with the element-by-element path strided views take.
#include <doctest/doctest.h>
#include <trainhook/support/tensor_math.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using trainhook::TensorView;
namespace support = trainhook::support;

namespace {

// A float32/float64 CPU DLTensor over caller-owned data: shape {rows, cols},
// row-major, or its transpose as a strided (non-contiguous) view.
template <class T>
struct View {
  std::vector<T> data;
  int64_t shape[2];
  int64_t strides[2];
  DLTensor t{};

  View(int64_t rows, int64_t cols, bool transposed) : data(static_cast<size_t>(rows * cols)) {
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<T>(std::sin(static_cast<double>(i) * 0.37) * (1.0 + static_cast<double>(i % 7)));
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = {kDLFloat, static_cast<uint8_t>(sizeof(T) * 8), 1};
    if (transposed) {  // the {cols, rows} transpose of the row-major {rows, cols} data
      shape[0] = cols;
      shape[1] = rows;
      strides[0] = 1;
      strides[1] = cols;
    } else {
      shape[0] = rows;
      shape[1] = cols;
      strides[0] = cols;
      strides[1] = 1;
    }
    t.shape = shape;
    t.strides = strides;
  }
  // t points into this object: a copy would point into the original.
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  TensorView view() const { return TensorView("w", &t); }
  long double reference_sum_squares() const {
    long double s = 0;
    for (const T v : data) s += static_cast<long double>(v) * static_cast<long double>(v);
    return s;
  }
};

// Fills `strided` (View(cols, rows, true)) so that it reads as the row-major
// {rows, cols} `contiguous`, value for value in the same order: an update over
// either then sees one sequence.
void fill_strided_twin(View<float>& strided, const View<float>& contiguous) {
  const int64_t rows = contiguous.shape[0], cols = contiguous.shape[1];
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      strided.data[static_cast<size_t>(c * rows + r)] = contiguous.data[static_cast<size_t>(r * cols + c)];
}

// Sizes around the 16 lanes and the 1024-value blocks, and a large one.
const int64_t kColumns[] = {1, 15, 16, 17, 1023, 1024, 1025, 4099};

}  // namespace

TEST_CASE("sum_squares of float32 views: within 1e-6 relative of a long-double sum, strided or not") {
  for (const int64_t rows : {1, 3, 64}) {
    for (const int64_t cols : kColumns) {
      const View<float> contiguous(rows, cols, false), strided(rows, cols, true);
      REQUIRE(contiguous.view().is_contiguous());
      if (rows > 1 && cols > 1)
        REQUIRE_FALSE(strided.view().is_contiguous());  // else a transpose is the same
      const double ref = static_cast<double>(contiguous.reference_sum_squares());
      CAPTURE(rows);
      CAPTURE(cols);
      CHECK(support::sum_squares(contiguous.view()) == doctest::Approx(ref).epsilon(1e-6));
      CHECK(support::sum_squares(strided.view()) == doctest::Approx(ref).epsilon(1e-6));
    }
  }
}

TEST_CASE("sum_squares of float64 views and of an absent gradient") {
  const View<double> v(5, 1025, false);
  CHECK(support::sum_squares(v.view()) ==
        doctest::Approx(static_cast<double>(v.reference_sum_squares())).epsilon(1e-12));
  DLTensor none{};
  none.dtype = {kDLFloat, 32, 1};
  CHECK(support::sum_squares(TensorView("g", &none)) == 0.0);
}

TEST_CASE("the EMA update in doubles: the contiguous fast path equals the strided path bit for bit") {
  for (const int64_t cols : kColumns) {
    const int64_t rows = 3;
    const View<float> contiguous(rows, cols, false);
    View<float> strided(cols, rows, true);
    fill_strided_twin(strided, contiguous);
    std::vector<double> fast(static_cast<size_t>(rows * cols), 0.5), slow = fast;
    for (int step = 0; step < 3; ++step) {
      support::scale_add(fast, 0.999, contiguous.view(), 0.001);
      support::scale_add(slow, 0.999, strided.view(), 0.001);
    }
    CAPTURE(cols);
    CHECK(fast == slow);
    const double expect0 = ((0.5 * 0.999 + static_cast<double>(contiguous.data[0]) * 0.001) * 0.999 +
                            static_cast<double>(contiguous.data[0]) * 0.001) *
                               0.999 +
                           static_cast<double>(contiguous.data[0]) * 0.001;
    CHECK(fast[0] == expect0);
  }
}

TEST_CASE(
    "TensorCopy keeps float32 values in float32: the update equals float arithmetic bit for bit, strided or "
    "not") {
  for (const int64_t cols : kColumns) {
    const int64_t rows = 3;
    const View<float> contiguous(rows, cols, false);
    View<float> strided(cols, rows, true);
    fill_strided_twin(strided, contiguous);
    support::TensorCopy fast(contiguous.view()), slow(contiguous.view());
    REQUIRE(fast.bits() == 32);
    REQUIRE(fast.numel() == rows * cols);
    REQUIRE(fast.size_bytes() == static_cast<size_t>(rows * cols) * sizeof(float));
    for (int step = 0; step < 3; ++step) {
      fast.scale_add(0.999, contiguous.view(), 0.001);
      slow.scale_add(0.999, strided.view(), 0.001);
    }
    CAPTURE(cols);
    CHECK(std::memcmp(fast.data(), slow.data(), fast.size_bytes()) == 0);
    float expect = contiguous.data[0];
    for (int step = 0; step < 3; ++step) expect = expect * 0.999f + contiguous.data[0] * 0.001f;
    CHECK(static_cast<const float*>(fast.data())[0] == expect);
  }
}

TEST_CASE("TensorCopy: write_to restores a view, saved bytes load back, bad bytes are named") {
  View<float> target(4, 17, true);
  const View<float> source(4, 17, true);
  const support::TensorCopy copy(source.view());
  for (float& v : target.data) v = 0;
  copy.write_to(target.view());
  CHECK(target.data == source.data);

  const std::string bytes(static_cast<const char*>(copy.data()), copy.size_bytes());
  const support::TensorCopy back = support::TensorCopy::from_bytes(32, bytes, "w");
  CHECK(std::memcmp(back.data(), copy.data(), copy.size_bytes()) == 0);
  // An older state holds doubles: converted to the parameter's float32, rounded.
  const support::TensorCopy wide = copy.converted(64);
  CHECK(wide.bits() == 64);
  CHECK(wide.size_bytes() == 2 * copy.size_bytes());
  CHECK(std::memcmp(wide.converted(32).data(), copy.data(), copy.size_bytes()) == 0);

  CHECK_THROWS_WITH(support::TensorCopy::from_bytes(32, "abcde", "ema: EMA weight 'fc.weight'"),
                    doctest::Contains("ema: EMA weight 'fc.weight' is truncated (5 bytes"));
  CHECK_THROWS_WITH(support::TensorCopy::from_bytes(16, "abcd", "w"), doctest::Contains("expected 32 or 64"));
  const View<float> other(2, 3, false);
  support::TensorCopy small(other.view());
  CHECK_THROWS_WITH(small.scale_add(0.5, source.view(), 0.5), doctest::Contains("68 elements, not 6"));
  CHECK_THROWS_WITH(small.write_to(target.view()), doctest::Contains("68 elements, not 6"));
}
