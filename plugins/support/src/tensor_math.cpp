#include <trainhook/support/tensor_math.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trainhook::support {
namespace detail {

void check_float(const TensorView& t) {
  const DLTensor& d = t.dl();
  if (d.device.device_type != kDLCPU || d.dtype.code != kDLFloat || d.dtype.lanes != 1 ||
      (d.dtype.bits != 32 && d.dtype.bits != 64))
    throw std::runtime_error("tensor '" + std::string(t.name()) +
                             "' is not a float32/float64 CPU tensor (this plugin reads only those)");
}

int64_t offset_of(const DLTensor& t, int64_t i) {
  int64_t off = 0;
  for (int32_t dim = t.ndim - 1; dim >= 0; --dim) {
    const int64_t idx = i % t.shape[dim];
    i /= t.shape[dim];
    off += idx * (t.strides != nullptr ? t.strides[dim] : 1);
  }
  return off;
}

}  // namespace detail

namespace {

// The hot loops of the per-step plugins (grad_stats every step over ~1 M
// values, ema every step) are built twice on x86-64 glibc: for AVX2 and for the
// baseline, picked once at load time (GCC's and clang's target_clones). Only
// "avx2", never "fma": a fused multiply-add would round differently, and the
// same EMA must come out bit for bit on every machine. The lane structure is
// written out below, so both versions do the same additions in the same order
// and give identical results.
#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define TRAINHOOK_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TRAINHOOK_VECTOR_CLONES
#endif

// Floats are squared and summed in float within blocks of kBlock values (16
// lanes of at most 64 terms each, so each partial sum is off by at most ~64 ulp,
// a relative 4e-6 and in practice ~1e-7), and the blocks are summed in double:
// twice the lanes per vector of a double accumulation, and enough for a norm.
constexpr int64_t kLanes = 16, kBlock = 1024;

TRAINHOOK_VECTOR_CLONES double sum_squares_floats(const float* p, int64_t n) {
  double s = 0;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    const int64_t end = begin + kBlock < n ? begin + kBlock : n;
    float acc[kLanes] = {};
    int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes)
      for (int64_t k = 0; k < kLanes; ++k) acc[k] += p[i + k] * p[i + k];
    for (; i < end; ++i) s += static_cast<double>(p[i]) * static_cast<double>(p[i]);
    double block = 0;
    for (const float a : acc) block += static_cast<double>(a);
    s += block;
  }
  return s;
}

// Eight independent double partial sums: a single accumulator is a chain of
// dependent adds the compiler may not reorder (no -ffast-math), eight vectorise.
TRAINHOOK_VECTOR_CLONES double sum_squares_doubles(const double* p, int64_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += p[i + k] * p[i + k];
  double s = 0;
  for (; i < n; ++i) s += p[i] * p[i];
  for (const double a : acc) s += a;
  return s;
}

// x = x * a + src * b over n contiguous values: the EMA update kept in doubles.
template <class T>
inline void scale_add_kernel(double* x, double a, const T* src, double b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * a + static_cast<double>(src[i]) * b;
}
TRAINHOOK_VECTOR_CLONES void scale_add_floats(double* x, double a, const float* src, double b, int64_t n) {
  scale_add_kernel(x, a, src, b, n);
}
TRAINHOOK_VECTOR_CLONES void scale_add_doubles(double* x, double a, const double* src, double b, int64_t n) {
  scale_add_kernel(x, a, src, b, n);
}
// The same update kept in float32 (TensorCopy of a float32 tensor).
TRAINHOOK_VECTOR_CLONES void scale_add_float_copy(float* x, float a, const float* src, float b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * a + src[i] * b;
}

}  // namespace

double sum_squares(const TensorView& t) {
  if (!t.defined()) return 0;
  detail::check_float(t);
  if (t.is_contiguous()) {
    const DLTensor& d = t.dl();
    const char* base = static_cast<const char*>(d.data) + d.byte_offset;
    return d.dtype.bits == 32 ? sum_squares_floats(reinterpret_cast<const float*>(base), t.numel())
                              : sum_squares_doubles(reinterpret_cast<const double*>(base), t.numel());
  }
  double s = 0;
  for_each_value(t, [&](double v, int64_t) { s += v * v; });
  return s;
}

void scale_add(std::vector<double>& dst, double a, const TensorView& src, double b) {
  if (static_cast<int64_t>(dst.size()) != src.numel())
    throw std::runtime_error("tensor '" + std::string(src.name()) + "' has " + std::to_string(src.numel()) +
                             " elements, not " + std::to_string(dst.size()));
  double* x = dst.data();
  if (src.defined() && src.is_contiguous()) {
    detail::check_float(src);
    const DLTensor& d = src.dl();
    const char* base = static_cast<const char*>(d.data) + d.byte_offset;
    if (d.dtype.bits == 32) {
      scale_add_floats(x, a, reinterpret_cast<const float*>(base), b, src.numel());
    } else {
      scale_add_doubles(x, a, reinterpret_cast<const double*>(base), b, src.numel());
    }
    return;
  }
  for_each_value(src, [x, a, b](double v, int64_t i) { x[i] = x[i] * a + v * b; });
}

TensorCopy::TensorCopy(const TensorView& t) {
  detail::check_float(t);
  bits_ = t.dl().dtype.bits;
  if (bits_ == 32) {
    f_.resize(static_cast<size_t>(t.numel()));
    for_each_value(t, [this](double v, int64_t i) { f_[static_cast<size_t>(i)] = static_cast<float>(v); });
  } else {
    d_ = read_values(t);
  }
}

TensorCopy TensorCopy::from_bytes(int bits, const std::string& bytes, const std::string& name) {
  if (bits != 32 && bits != 64)
    throw std::runtime_error(name + " is saved with " + std::to_string(bits) +
                             "-bit values; expected 32 or 64");
  const size_t width = static_cast<size_t>(bits / 8);
  if (bytes.size() % width != 0)
    throw std::runtime_error(name + " is truncated (" + std::to_string(bytes.size()) +
                             " bytes, not a whole number of " + std::to_string(bits) + "-bit values)");
  TensorCopy c;
  c.bits_ = bits;
  if (bits == 32) {
    c.f_.resize(bytes.size() / width);
    std::memcpy(c.f_.data(), bytes.data(), bytes.size());
  } else {
    c.d_.resize(bytes.size() / width);
    std::memcpy(c.d_.data(), bytes.data(), bytes.size());
  }
  return c;
}

int64_t TensorCopy::numel() const noexcept {
  return static_cast<int64_t>(bits_ == 32 ? f_.size() : d_.size());
}

const void* TensorCopy::data() const noexcept {
  return bits_ == 32 ? static_cast<const void*>(f_.data()) : static_cast<const void*>(d_.data());
}

size_t TensorCopy::size_bytes() const noexcept {
  return bits_ == 32 ? f_.size() * sizeof(float) : d_.size() * sizeof(double);
}

TensorCopy TensorCopy::converted(int bits) const {
  if (bits == bits_) return *this;
  TensorCopy c;
  c.bits_ = bits;
  if (bits == 32) {
    c.f_.assign(d_.begin(), d_.end());  // rounds each double to the nearest float
  } else {
    c.d_.assign(f_.begin(), f_.end());
  }
  return c;
}

void TensorCopy::scale_add(double a, const TensorView& src, double b) {
  if (src.numel() != numel())
    throw std::runtime_error("tensor '" + std::string(src.name()) + "' has " + std::to_string(src.numel()) +
                             " elements, not " + std::to_string(numel()));
  if (bits_ == 64) {
    support::scale_add(d_, a, src, b);
    return;
  }
  detail::check_float(src);
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  const DLTensor& d = src.dl();
  if (d.dtype.bits == 32 && src.is_contiguous()) {
    const char* base = static_cast<const char*>(d.data) + d.byte_offset;
    scale_add_float_copy(f_.data(), fa, reinterpret_cast<const float*>(base), fb, numel());
    return;
  }
  float* x = f_.data();
  for_each_value(src, [x, fa, fb](double v, int64_t i) { x[i] = x[i] * fa + static_cast<float>(v) * fb; });
}

void TensorCopy::write_to(const TensorView& t) const {
  if (bits_ == 64) {
    write_values(t, d_);
    return;
  }
  detail::check_float(t);
  if (t.numel() != numel())
    throw std::runtime_error("tensor '" + std::string(t.name()) + "' has " + std::to_string(t.numel()) +
                             " elements, not " + std::to_string(numel()));
  const DLTensor& d = t.dl();
  char* base = static_cast<char*>(d.data) + d.byte_offset;
  const bool fast = t.is_contiguous();
  for (int64_t i = 0; i < numel(); ++i) {
    const int64_t at = fast ? i : detail::offset_of(d, i);
    if (d.dtype.bits == 32) {
      reinterpret_cast<float*>(base)[at] = f_[static_cast<size_t>(i)];
    } else {
      reinterpret_cast<double*>(base)[at] = f_[static_cast<size_t>(i)];
    }
  }
}

bool all_finite(const TensorView& t) {
  bool ok = true;
  for_each_value(t, [&](double v, int64_t) { ok = ok && std::isfinite(v); });
  return ok;
}

TensorStats stats(const TensorView& t) {
  TensorStats s;
  for_each_value(t, [&](double v, int64_t i) {
    if (i == 0) s.min = s.max = v;
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.sum += v;
    s.sum_squares += v * v;
    s.all_finite = s.all_finite && std::isfinite(v);
    ++s.count;
  });
  return s;
}

namespace {

template <class T>
void apply(const TensorView& dst, const TensorView& src, double a, double b, bool copy_only) {
  const DLTensor& d = dst.dl();
  const DLTensor& s = src.dl();
  T* pd = reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
  const T* ps = reinterpret_cast<const T*>(static_cast<const char*>(s.data) + s.byte_offset);
  const int64_t n = dst.numel();
  const bool fast = dst.is_contiguous() && src.is_contiguous();
  for (int64_t i = 0; i < n; ++i) {
    T& x = pd[fast ? i : detail::offset_of(d, i)];
    const T y = ps[fast ? i : detail::offset_of(s, i)];
    x = copy_only ? y : static_cast<T>(x * a + y * b);
  }
}

void check_pair(const TensorView& dst, const TensorView& src) {
  detail::check_float(dst);
  detail::check_float(src);
  if (dst.numel() != src.numel() || dst.dl().dtype.bits != src.dl().dtype.bits)
    throw std::runtime_error("tensors '" + std::string(dst.name()) + "' and '" + std::string(src.name()) +
                             "' differ in size or dtype");
}

}  // namespace

void scale_add(const TensorView& dst, double a, const TensorView& src, double b) {
  check_pair(dst, src);
  if (dst.dl().dtype.bits == 32) {
    apply<float>(dst, src, a, b, false);
  } else {
    apply<double>(dst, src, a, b, false);
  }
}

void copy(const TensorView& dst, const TensorView& src) {
  check_pair(dst, src);
  if (dst.dl().dtype.bits == 32) {
    apply<float>(dst, src, 0, 1, true);
  } else {
    apply<double>(dst, src, 0, 1, true);
  }
}

std::vector<double> read_values(const TensorView& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for_each_value(t, [&](double v, int64_t i) { out[static_cast<size_t>(i)] = v; });
  return out;
}

namespace {
template <class T>
void write_as(const TensorView& t, const std::vector<double>& values) {
  const DLTensor& d = t.dl();
  T* p = reinterpret_cast<T*>(static_cast<char*>(d.data) + d.byte_offset);
  const bool fast = t.is_contiguous();
  for (int64_t i = 0; i < t.numel(); ++i)
    p[fast ? i : detail::offset_of(d, i)] = static_cast<T>(values[static_cast<size_t>(i)]);
}
}  // namespace

void write_values(const TensorView& t, const std::vector<double>& values) {
  detail::check_float(t);
  if (static_cast<int64_t>(values.size()) != t.numel())
    throw std::runtime_error("tensor '" + std::string(t.name()) + "' has " + std::to_string(t.numel()) +
                             " elements, not " + std::to_string(values.size()));
  if (t.dl().dtype.bits == 32) {
    write_as<float>(t, values);
  } else {
    write_as<double>(t, values);
  }
}

}  // namespace trainhook::support
