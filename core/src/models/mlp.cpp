#include <trainhook/models/mlp.hpp>

#include <stdexcept>

namespace trainhook {

MlpModel::MlpModel(const MlpOptions& options) : options_(options) {
  if (options.in_features < 1 || options.num_classes < 1 || options.hidden_size < 1 ||
      options.num_layers < 0) {
    throw std::invalid_argument(
        "mlp: in_features, num_classes and hidden_size must be >= 1 and num_layers >= 0");
  }
  torch::nn::Sequential seq;
  int64_t width = options.in_features;
  for (int64_t i = 0; i < options.num_layers; ++i) {
    seq->push_back(torch::nn::Linear(width, options.hidden_size));
    seq->push_back(torch::nn::ReLU());
    if (options.dropout > 0) seq->push_back(torch::nn::Dropout(options.dropout));
    width = options.hidden_size;
  }
  seq->push_back(torch::nn::Linear(width, options.num_classes));
  layers_ = register_module("layers", seq);
}

torch::Tensor MlpModel::forward(const torch::Tensor& inputs) { return layers_->forward(inputs.flatten(1)); }

torch::Tensor MlpModel::loss(const torch::Tensor& outputs, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(outputs, labels);
}

std::string MlpModel::description() const {
  return "mlp(in=" + std::to_string(options_.in_features) +
         ", hidden=" + std::to_string(options_.hidden_size) + "x" + std::to_string(options_.num_layers) +
         ", classes=" + std::to_string(options_.num_classes) + ")";
}

}  // namespace trainhook
