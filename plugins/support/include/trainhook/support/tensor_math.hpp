// Element loops over the SDK's borrowed tensor views (ABI 1.1) for the
// training-health plugins: float32/float64 CPU tensors of any strides (a fast
// path for contiguous ones). Other dtypes or devices throw std::runtime_error
// naming the tensor. Standard library and sdk/ only.
#pragma once

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook::support {

struct TensorStats {
  double min = 0;
  double max = 0;
  double sum = 0;
  double sum_squares = 0;
  int64_t count = 0;
  bool all_finite = true;
};

// Sum of squares; 0 for an undefined view (no gradient). float32 values are
// summed in float within blocks of 1024 and the blocks in double (relative error
// below 4e-6, in practice ~1e-7), float64 in double; AVX2 where the CPU has it,
// with the same result as without.
double sum_squares(const TensorView& t);
// False when an element is NaN or infinite; true for an undefined view.
bool all_finite(const TensorView& t);
TensorStats stats(const TensorView& t);

// Calls f(double value, int64_t i) for each element in row-major order.
template <class F>
void for_each_value(const TensorView& t, F&& f);
// dst = dst * a + src * b elementwise (EMA update, swaps); same shapes and dtypes.
void scale_add(const TensorView& dst, double a, const TensorView& src, double b);
// dst[i] = dst[i] * a + src[i] * b for every element of src (row-major), in
// double precision (dst.size() == src.numel()).
void scale_add(std::vector<double>& dst, double a, const TensorView& src, double b);

// A plugin's own contiguous copy of a view's values, in the view's dtype
// (float32 or float64), row-major: EMA weights, the training weights during an
// EMA evaluation. Kept in the parameter's dtype as torch's AveragedModel and
// Lightning's EMA keep theirs: a float32 copy moves half the bytes of a double
// one through the cache at every update, and the update is the per-step cost.
class TensorCopy {
 public:
  TensorCopy() = default;
  explicit TensorCopy(const TensorView& t);
  // From the bytes data() held (a saved state); throws, starting with `name`, when the
  // byte count is not a whole number of `bits`-wide values or bits is not 32/64.
  static TensorCopy from_bytes(int bits, const std::string& bytes, const std::string& name);

  int bits() const noexcept { return bits_; }
  int64_t numel() const noexcept;
  const void* data() const noexcept;
  size_t size_bytes() const noexcept;
  // The same values in another width (an older state kept in doubles, loaded for float32 parameters).
  TensorCopy converted(int bits) const;

  // x = x * a + src * b for every element, in this copy's dtype (a and b rounded
  // to it); the same results with AVX2 or without, strided src or not.
  void scale_add(double a, const TensorView& src, double b);
  // Writes the values into t (same number of elements; rounded to t's dtype).
  void write_to(const TensorView& t) const;

 private:
  int bits_ = 32;
  std::vector<float> f_;
  std::vector<double> d_;
};
// Copies every element of src into dst (same shape and dtype).
void copy(const TensorView& dst, const TensorView& src);
// The elements as doubles (row-major), and back (rounded to the tensor's dtype).
std::vector<double> read_values(const TensorView& t);
void write_values(const TensorView& t, const std::vector<double>& values);

namespace detail {
void check_float(const TensorView& t);
int64_t offset_of(const DLTensor& t, int64_t i);
}  // namespace detail

template <class F>
void for_each_value(const TensorView& t, F&& f) {
  if (!t.defined()) return;
  detail::check_float(t);
  const DLTensor& d = t.dl();
  const char* base = static_cast<const char*>(d.data) + d.byte_offset;
  const int64_t n = t.numel();
  // The contiguous loops have no per-element branch, so the compiler can vectorise them.
  const bool contiguous = t.is_contiguous();
  if (d.dtype.bits == 32) {
    const auto* p = reinterpret_cast<const float*>(base);
    if (contiguous) {
      for (int64_t i = 0; i < n; ++i) f(static_cast<double>(p[i]), i);
    } else {
      for (int64_t i = 0; i < n; ++i) f(static_cast<double>(p[detail::offset_of(d, i)]), i);
    }
  } else {
    const auto* p = reinterpret_cast<const double*>(base);
    if (contiguous) {
      for (int64_t i = 0; i < n; ++i) f(p[i], i);
    } else {
      for (int64_t i = 0; i < n; ++i) f(p[detail::offset_of(d, i)], i);
    }
  }
}

}  // namespace trainhook::support
