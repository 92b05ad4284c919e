// Small causal transformer for character-level language modelling: token and
// learned position embeddings, num_layers pre-norm encoder layers with a causal
// mask, a final LayerNorm and a linear head to the vocabulary. Loss: mean
// cross-entropy of the next character over every position.
#pragma once

#include <trainhook/models/model.hpp>

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

namespace trainhook {

struct CharTransformerOptions {
  int64_t vocab_size = 0;
  int64_t block_size = 64;  // maximum context
  int64_t hidden_size = 128;
  int64_t num_layers = 2;
  int64_t num_heads = 4;
  double dropout = 0.0;
};

class CharTransformerModel final : public torch::nn::Module, public Model {
 public:
  explicit CharTransformerModel(const CharTransformerOptions& options);
  torch::nn::Module& module() override { return *this; }
  // inputs: [batch, seq] token ids (seq <= block_size) -> [batch, seq, vocab].
  torch::Tensor forward(const torch::Tensor& inputs) override;
  torch::Tensor loss(const torch::Tensor& outputs, const torch::Tensor& labels) override;
  std::string description() const override;
  int64_t tokens_per_sample(const torch::Tensor& inputs) const override { return inputs.size(-1); }

 private:
  CharTransformerOptions options_;
  torch::nn::Embedding token_embedding_{nullptr};
  torch::nn::Embedding position_embedding_{nullptr};
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear head_{nullptr};
};

}  // namespace trainhook
