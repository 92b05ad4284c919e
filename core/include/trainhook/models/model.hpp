// The model interface the Trainer trains: a torch::nn::Module that turns a
// batch of inputs into outputs (logits) and those outputs plus labels into a
// scalar loss. Built-in models implement it directly; any other module can be
// wrapped with make_model().
//
// Ownership: the Trainer holds the Model through a shared_ptr; module() must
// return the same module for the Model's whole lifetime (the optimizer keeps
// references to its parameters).
#pragma once

#include <trainhook/data/batch.hpp>

#include <torch/nn/module.h>
#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace trainhook {

// What a model makes of a batch: its outputs (logits or predictions) and the
// batch's mean loss.
struct ModelOutput {
  torch::Tensor outputs;
  torch::Tensor loss;
};

class Model {
 public:
  virtual ~Model() = default;
  // The module whose parameters are trained, saved and loaded.
  virtual torch::nn::Module& module() = 0;
  // Outputs for a batch of inputs: [batch, classes] logits, or [batch, seq, vocab].
  virtual torch::Tensor forward(const torch::Tensor& inputs) = 0;
  // Mean loss of a batch (a 0-dim tensor that requires grad while training).
  virtual torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) = 0;
  // Outputs and loss of a whole batch; the trainer calls this. The default is
  // forward(inputs) then loss(outputs, labels); a model that takes the batch's
  // tensors by name (TorchScript) or computes its own loss overrides it.
  virtual ModelOutput forward_batch(const Batch& batch) {
    auto outputs = forward(batch.inputs);
    auto l = loss(outputs, batch.labels);
    return {std::move(outputs), std::move(l)};
  }
  // One line for plugins (th_host.model_description); may be empty.
  virtual std::string description() const { return ""; }
  // Elements of a sample that count as tokens for total_flos (HF: 6 × tokens ×
  // parameters). 1 for tabular/image samples, the sequence length for a LM.
  virtual int64_t tokens_per_sample(const torch::Tensor& inputs) const {
    (void)inputs;
    return 1;
  }
};

using LossFn = std::function<torch::Tensor(const torch::Tensor& outputs, const torch::Tensor& labels)>;

// Wraps a LibTorch module holder (e.g. torch::nn::Sequential or a
// TORCH_MODULE(...) type) and a loss function into a Model.
template <typename Holder>
class ModuleModel final : public Model {
 public:
  ModuleModel(Holder holder, LossFn loss, std::string description)
      : holder_(std::move(holder)), loss_(std::move(loss)), description_(std::move(description)) {}
  torch::nn::Module& module() override { return *holder_; }
  torch::Tensor forward(const torch::Tensor& inputs) override { return holder_->forward(inputs); }
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) override {
    return loss_(outputs, labels);
  }
  std::string description() const override { return description_; }
  Holder& holder() noexcept { return holder_; }

 private:
  Holder holder_;
  LossFn loss_;
  std::string description_;
};

template <typename Holder>
std::shared_ptr<Model> make_model(Holder holder, LossFn loss, std::string description = "") {
  return std::make_shared<ModuleModel<Holder>>(std::move(holder), std::move(loss), std::move(description));
}

}  // namespace trainhook
