// Weight and gradient histograms (plugin_config tensorboard.histograms=weights,gradients,
// every tensorboard.histogram_steps steps), from the ABI 1.1 tensor views.
// Histograms are computed on the training thread at on_pre_optimizer_step (the
// event where gradients are readable, as the optimizer will apply them) and
// queued as ready Events; the writer thread appends them.
//
// Encoding: Summary.Value{tag, histo = HistogramProto{min, max, num, sum,
// sum_squares, bucket_limit, bucket}} (tensorboard/compat/proto/summary.proto),
// with TensorFlow's default bucket limits (+-1e-12 * 1.1^k up to 1e20, and
// DBL_MAX); only non-empty buckets are written. TensorBoard's histogram plugin
// and the legacy EventAccumulator.Histograms() read them.
#pragma once

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trainhook::tensorboard {

struct Histogram {
  double min = 0;
  double max = 0;
  double num = 0;
  double sum = 0;
  double sum_squares = 0;
  std::vector<double> bucket_limit;  // right edges of the non-empty buckets
  std::vector<double> bucket;        // their counts
};

// Over a float32/float64 CPU view; throws std::runtime_error naming it otherwise.
Histogram histogram_of(const TensorView& t);

// An Event{wall_time, step, summary = one histo Value per (tag, histogram)}.
std::string encode_histogram_event(double wall_time, int64_t step,
                                   const std::vector<std::pair<std::string, Histogram>>& histograms);

}  // namespace trainhook::tensorboard
