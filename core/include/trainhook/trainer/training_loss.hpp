// The loss the Trainer computes for a batch (HF Trainer.compute_loss) and the
// inputs it counts (HF include_num_input_tokens_seen).
//
// With label_smoothing_factor != 0, HF replaces the model's loss by its
// LabelSmoother: cross-entropy against (1 - f) × one-hot + f / classes, the
// mean over labels that are not -100. That equals
// torch.nn.functional.cross_entropy(logits, labels, label_smoothing=f), so the
// smoothed loss is LibTorch's; sequence outputs [batch, seq, vocab] are
// flattened against labels [batch, seq] (the character LM's labels are already
// shifted).
#pragma once

#include <trainhook/models/model.hpp>

#include <cstdint>

namespace trainhook {

// Throws std::invalid_argument when the labels are not class indices (a
// regression target) or the shapes do not fit [.., classes] logits.
torch::Tensor label_smoothed_cross_entropy(const torch::Tensor& logits, const torch::Tensor& labels,
                                           double label_smoothing_factor);

// The model's outputs and loss for a batch (Model::forward_batch); with a
// label_smoothing_factor other than 0 the loss is the label-smoothed
// cross-entropy of the outputs instead (HF's label smoother replaces the model's loss).
ModelOutput forward_with_loss(Model& model, const Batch& batch, double label_smoothing_factor);

// Input elements of a batch that count as tokens: samples × tokens_per_sample
// (the sequence length for the character LM, 1 for a row of tabular data).
int64_t input_tokens(const Model& model, const torch::Tensor& inputs);

}  // namespace trainhook
