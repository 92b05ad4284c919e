#include <trainhook/models/cnn.hpp>

#include <stdexcept>

namespace trainhook {

CnnModel::CnnModel(const CnnOptions& options) : options_(options) {
  if (options.image_size < 2 || options.num_classes < 1 || options.channels < 2 || options.hidden_size < 1) {
    throw std::invalid_argument("cnn: image_size must be >= 2, num_classes, hidden_size >= 1, channels >= 2");
  }
  const int64_t c1 = options.channels / 2;
  const int64_t c2 = options.channels;
  torch::nn::Sequential features(torch::nn::Conv2d(torch::nn::Conv2dOptions(1, c1, 3).padding(1)),
                                 torch::nn::ReLU(),
                                 torch::nn::Conv2d(torch::nn::Conv2dOptions(c1, c2, 3).padding(1)),
                                 torch::nn::ReLU(), torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(2)));
  const int64_t side = options.image_size / 2;
  torch::nn::Sequential head(torch::nn::Flatten(), torch::nn::Linear(c2 * side * side, options.hidden_size),
                             torch::nn::ReLU());
  if (options.dropout > 0) head->push_back(torch::nn::Dropout(options.dropout));
  head->push_back(torch::nn::Linear(options.hidden_size, options.num_classes));
  features_ = register_module("features", features);
  head_ = register_module("head", head);
}

torch::Tensor CnnModel::forward(const torch::Tensor& inputs) {
  const auto x = inputs.dim() == 4
                     ? inputs
                     : inputs.reshape({inputs.size(0), 1, options_.image_size, options_.image_size});
  return head_->forward(features_->forward(x));
}

torch::Tensor CnnModel::loss(const torch::Tensor& outputs, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(outputs, labels);
}

std::string CnnModel::description() const {
  return "cnn(image=" + std::to_string(options_.image_size) + "x" + std::to_string(options_.image_size) +
         ", channels=" + std::to_string(options_.channels) +
         ", classes=" + std::to_string(options_.num_classes) + ")";
}

}  // namespace trainhook
