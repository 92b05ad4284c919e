// HF's LabelSmoother through LibTorch's cross_entropy, and the token count.
#include <trainhook/trainer/training_loss.hpp>


#include <torch/nn/functional/loss.h>

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace trainhook {

torch::Tensor label_smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                           double label_smoothing_factor) {
  if (!(label_smoothing_factor >= 0.0 && label_smoothing_factor <= 1.0)) {
    throw std::invalid_argument("label_smoothing_factor: expected a value in [0, 1], got " +
                                nlohmann::json(label_smoothing_factor).dump());
  }
  if (labels.is_floating_point()) {
    throw std::invalid_argument(
        "label_smoothing_factor: needs class labels (integers), but the labels are floating point "
        "(a regression target); set label_smoothing_factor to 0");
  }
  if (logits.dim() < 2 || logits.dim() != labels.dim() + 1) {
    throw std::invalid_argument(
        "label_smoothing_factor: expected [batch, ..., classes] outputs for [batch, ...] "
        "labels, got outputs of " +
        std::to_string(logits.dim()) + " and labels of " + std::to_string(labels.dim()) + " dimensions");
  }
  namespace F = torch::nn::functional;
  const auto options =
      F::CrossEntropyFuncOptions().label_smoothing(label_smoothing_factor).ignore_index(-100);
  return F::cross_entropy(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}).to(torch::kLong),
                          options);
}

ModelOutput forward_with_loss(Model& model, const Batch& batch, double label_smoothing_factor) {
  ModelOutput result = model.forward_batch(batch);
  if (label_smoothing_factor != 0.0)
    result.loss = label_smoothed_cross_entropy(result.outputs, batch.labels, label_smoothing_factor);
  return result;
}

int64_t input_tokens(const Model& model, const torch::Tensor& inputs) {
  return inputs.size(0) * model.tokens_per_sample(inputs);
}

}  // namespace trainhook
