#include <trainhook/trainer/label_metrics.hpp>

#include <trainhook/trainer/eval_prediction.hpp>
#include <trainhook/trainer/trainer.hpp>

namespace trainhook {

Metrics label_metrics(const EvalPrediction& p) {
  if (!p.label_ids.is_floating_point()) return accuracy_metrics(p);
  const auto labels = p.label_ids.to(torch::kDouble);
  auto predictions = p.predictions.to(torch::kDouble);
  if (predictions.numel() == labels.numel()) predictions = predictions.reshape(labels.sizes());
  const auto diff = predictions - labels;
  return {{"mse", diff.pow(2).mean().item<double>()}, {"mae", diff.abs().mean().item<double>()}};
}

}  // namespace trainhook
