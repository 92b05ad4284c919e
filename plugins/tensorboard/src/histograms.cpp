#include <trainhook/tensorboard/histograms.hpp>

#include <trainhook/tensorboard/event_builder.hpp>

#include <trainhook/support/tensor_math.hpp>

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <map>
#include <stdexcept>

namespace trainhook::tensorboard {
namespace {

// TensorFlow's default histogram bucket limits (core/lib/histogram/histogram.cc).
const std::vector<double>& default_limits() {
  static const std::vector<double> limits = [] {
    std::vector<double> pos;
    for (double v = 1e-12; v < 1e20; v *= 1.1) pos.push_back(v);
    pos.push_back(DBL_MAX);
    std::vector<double> all;
    for (auto it = pos.rbegin(); it != pos.rend(); ++it) all.push_back(-*it);
    all.push_back(0.0);
    all.insert(all.end(), pos.begin(), pos.end());
    return all;
  }();
  return limits;
}

std::string packed(const std::vector<double>& v) {
  std::string out(v.size() * sizeof(double), '\0');
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());  // little-endian hosts (x86, ARM)
  return out;
}

}  // namespace

Histogram histogram_of(const TensorView& t) {
  if (!t.defined()) return {};
  const std::vector<double>& limits = default_limits();
  std::map<size_t, double> counts;
  Histogram h;
  try {
    // The element loop over any strides is plugins/support's (tensor_math.hpp).
    support::for_each_value(t, [&](double v, int64_t i) {
      if (i == 0) h.min = h.max = v;
      h.min = std::min(h.min, v);
      h.max = std::max(h.max, v);
      h.sum += v;
      h.sum_squares += v * v;
      const auto b = static_cast<size_t>(std::upper_bound(limits.begin(), limits.end(), v) - limits.begin());
      counts[std::min(b, limits.size() - 1)] += 1;
    });
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("tensorboard histograms: ") + e.what());
  }
  h.num = static_cast<double>(t.numel());
  for (const auto& [b, c] : counts) {
    h.bucket_limit.push_back(limits[b]);
    h.bucket.push_back(c);
  }
  return h;
}

std::string encode_histogram_event(double wall_time, int64_t step,
                                   const std::vector<std::pair<std::string, Histogram>>& histograms) {
  std::string out;
  encode_summary_event(out, wall_time, step, [&](ProtoWriter& summary) {
    for (const auto& [tag, h] : histograms) {
      summary.message_field(1, [&](ProtoWriter& v) {  // Summary.value
        v.bytes_field(1, tag);                        // Value.tag
        v.message_field(5, [&](ProtoWriter& p) {      // Value.histo (HistogramProto)
          p.double_field(1, h.min);
          p.double_field(2, h.max);
          p.double_field(3, h.num);
          p.double_field(4, h.sum);
          p.double_field(5, h.sum_squares);
          p.bytes_field(6, packed(h.bucket_limit));  // packed repeated double
          p.bytes_field(7, packed(h.bucket));
        });
      });
    }
  });
  return out;
}

}  // namespace trainhook::tensorboard
