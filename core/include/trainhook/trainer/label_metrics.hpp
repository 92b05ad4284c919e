// The CLI's compute_metrics, chosen from the labels' dtype: accuracy for class
// labels (integer), mse and mae for real-valued labels (regression).
// Torch-free header.
#pragma once

#include <trainhook/trainer/metrics_io.hpp>

namespace trainhook {

struct EvalPrediction;

// Integer labels: {"accuracy"} of argmax(predictions, -1) (accuracy_metrics).
// Floating-point labels: {"mse", "mae"} of the predictions (reshaped to the
// labels' shape) against the labels.
Metrics label_metrics(const EvalPrediction& p);

}  // namespace trainhook
