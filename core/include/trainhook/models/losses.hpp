// The losses --loss names (PyTorch's functional losses, mean reduction), for
// models whose forward returns no loss of its own.
#pragma once

#include <trainhook/models/model.hpp>

#include <string>
#include <vector>

namespace trainhook {

// "cross_entropy", "mse", "bce_with_logits", "l1".
std::vector<std::string> loss_names();

// Throws std::invalid_argument for an unknown name (listing the known ones).
// cross_entropy takes [N, C] (or [N, ..., C]) logits and integer class labels;
// the others take outputs and floating-point labels of the same number of
// elements per sample (a [N, 1] output against [N] labels is fine).
LossFn make_loss(const std::string& name);

// Throws std::invalid_argument naming `source` (the data file) when the labels'
// dtype does not fit the loss (integer classes for cross_entropy, floating
// point for the others).
void check_labels_fit_loss(const std::string& name, const torch::Tensor& labels, const std::string& source);

}  // namespace trainhook
