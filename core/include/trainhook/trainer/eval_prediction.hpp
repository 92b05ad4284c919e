// What compute_metrics sees (HF EvalPrediction) and what predict() returns.
#pragma once

#include <trainhook/trainer/metrics.hpp>

#include <torch/types.h>

namespace trainhook {

struct EvalPrediction {
  torch::Tensor predictions;  // model outputs of every sample, concatenated
  torch::Tensor label_ids;    // labels of every sample, concatenated
};

struct PredictionOutput {
  torch::Tensor predictions;
  torch::Tensor label_ids;
  Metrics metrics;  // <prefix>_loss, compute_metrics, runtime and speed
};

}  // namespace trainhook
