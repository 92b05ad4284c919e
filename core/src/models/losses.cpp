#include <trainhook/models/losses.hpp>

#include <trainhook/common/closest_name.hpp>

#include <torch/nn/functional/loss.h>

#include <stdexcept>

namespace F = torch::nn::functional;

namespace trainhook {
namespace {

// Regression outputs shaped like the labels ([N, 1] predictions, [N] targets).
torch::Tensor like(const torch::Tensor& outputs, const torch::Tensor& labels) {
  if (outputs.sizes() == labels.sizes()) return outputs;
  if (outputs.numel() != labels.numel()) {
    throw std::invalid_argument("loss: the model's outputs " + std::string(c10::str(outputs.sizes())) +
                                " do not fit the labels " + std::string(c10::str(labels.sizes())));
  }
  return outputs.reshape(labels.sizes());
}

// "int64 (Long)": PyTorch's Python name and LibTorch's.
std::string dtype_text(torch::ScalarType t) {
  static const std::pair<torch::ScalarType, const char*> py[] = {
      {torch::kLong, "int64"},       {torch::kInt, "int32"},      {torch::kShort, "int16"},
      {torch::kChar, "int8"},        {torch::kByte, "uint8"},     {torch::kBool, "bool"},
      {torch::kFloat, "float32"},    {torch::kDouble, "float64"}, {torch::kHalf, "float16"},
      {torch::kBFloat16, "bfloat16"}};
  for (const auto& [type, name] : py) {
    if (type == t) return std::string(name) + " (" + c10::toString(t) + ")";
  }
  return c10::toString(t);
}

}  // namespace

std::vector<std::string> loss_names() { return {"cross_entropy", "mse", "bce_with_logits", "l1"}; }

LossFn make_loss(const std::string& name) {
  if (name == "cross_entropy") {
    return [](const torch::Tensor& out, const torch::Tensor& labels) {
      // [N, T, C] sequence logits against [N, T] labels: one class per token.
      if (out.dim() > 2) return F::cross_entropy(out.reshape({-1, out.size(-1)}), labels.reshape({-1}));
      return F::cross_entropy(out, labels);
    };
  }
  if (name == "mse") {
    return [](const torch::Tensor& out, const torch::Tensor& labels) {
      return F::mse_loss(like(out, labels), labels.to(out.scalar_type()));
    };
  }
  if (name == "l1") {
    return [](const torch::Tensor& out, const torch::Tensor& labels) {
      return F::l1_loss(like(out, labels), labels.to(out.scalar_type()));
    };
  }
  if (name == "bce_with_logits") {
    return [](const torch::Tensor& out, const torch::Tensor& labels) {
      return F::binary_cross_entropy_with_logits(like(out, labels), labels.to(out.scalar_type()));
    };
  }
  const std::string close = closest_name(name, loss_names());
  throw std::invalid_argument("--loss: unknown loss '" + name + "'" +
                              (close.empty() ? std::string() : " (did you mean '" + close + "'?)") +
                              "; expected cross_entropy, mse, bce_with_logits or l1");
}

void check_labels_fit_loss(const std::string& name, const torch::Tensor& labels, const std::string& source) {
  const bool floating = labels.is_floating_point();
  const std::string dtype = dtype_text(labels.scalar_type());
  if (name == "cross_entropy" && floating) {
    throw std::invalid_argument(
        source + ": the labels are " + dtype +
        " (real values) but --loss cross_entropy needs integer class ids (int64); use "
        "--loss mse or l1 for regression, or save the labels as .long()");
  }
  if (name != "cross_entropy" && !floating) {
    throw std::invalid_argument(source + ": the labels are " + dtype + " but --loss " + name +
                                " needs floating-point labels (save them as .float()), or use --loss "
                                "cross_entropy for class ids");
  }
}

}  // namespace trainhook
