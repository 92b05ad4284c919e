#include <trainhook/models/char_transformer.hpp>

#include <stdexcept>

namespace trainhook {
namespace {

// One pre-norm block: x + attention(norm(x)) with a causal mask, then
// x + mlp(norm(x)). Sequence-first layout, as LibTorch's MultiheadAttention.
class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(int64_t hidden, int64_t heads, double dropout)
      : norm1_(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        attention_(register_module(
            "attention", torch::nn::MultiheadAttention(
                             torch::nn::MultiheadAttentionOptions(hidden, heads).dropout(dropout)))),
        norm2_(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        mlp_(register_module(
            "mlp",
            torch::nn::Sequential(torch::nn::Linear(hidden, 4 * hidden), torch::nn::GELU(),
                                  torch::nn::Linear(4 * hidden, hidden), torch::nn::Dropout(dropout)))) {}

  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& causal_mask) {
    const auto h = norm1_->forward(x);
    const auto attended = std::get<0>(attention_->forward(h, h, h, {}, false, causal_mask));
    const auto y = x + attended;
    return y + mlp_->forward(norm2_->forward(y));
  }

 private:
  torch::nn::LayerNorm norm1_;
  torch::nn::MultiheadAttention attention_;
  torch::nn::LayerNorm norm2_;
  torch::nn::Sequential mlp_;
};
TORCH_MODULE(Block);

}  // namespace

CharTransformerModel::CharTransformerModel(const CharTransformerOptions& options) : options_(options) {
  if (options.vocab_size < 1 || options.block_size < 1 || options.hidden_size < 1 || options.num_layers < 1 ||
      options.num_heads < 1 || options.hidden_size % options.num_heads != 0) {
    throw std::invalid_argument(
        "char_transformer: vocab_size, block_size, num_layers, num_heads must be >= 1 and "
        "hidden_size (" +
        std::to_string(options.hidden_size) + ") a multiple of num_heads (" +
        std::to_string(options.num_heads) + ")");
  }
  token_embedding_ =
      register_module("token_embedding", torch::nn::Embedding(options.vocab_size, options.hidden_size));
  position_embedding_ =
      register_module("position_embedding", torch::nn::Embedding(options.block_size, options.hidden_size));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (int64_t i = 0; i < options.num_layers; ++i) {
    layers_->push_back(Block(options.hidden_size, options.num_heads, options.dropout));
  }
  final_norm_ =
      register_module("final_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.hidden_size})));
  head_ = register_module("head", torch::nn::Linear(options.hidden_size, options.vocab_size));
}

torch::Tensor CharTransformerModel::forward(const torch::Tensor& inputs) {
  const int64_t seq = inputs.size(1);
  if (seq > options_.block_size) {
    throw std::invalid_argument("char_transformer: sequence of " + std::to_string(seq) +
                                " exceeds block_size " + std::to_string(options_.block_size));
  }
  const auto positions = torch::arange(seq, torch::kLong);
  auto x = token_embedding_->forward(inputs) + position_embedding_->forward(positions).unsqueeze(0);
  x = x.transpose(0, 1);  // [seq, batch, hidden]
  // -inf above the diagonal: position i attends to 0..i only.
  const auto mask = torch::full({seq, seq}, -std::numeric_limits<float>::infinity()).triu(1);
  for (const auto& layer : *layers_) x = layer->as<BlockImpl>()->forward(x, mask);
  return head_->forward(final_norm_->forward(x.transpose(0, 1)));
}

torch::Tensor CharTransformerModel::loss(const torch::Tensor& outputs, const torch::Tensor& labels) {
  return torch::nn::functional::cross_entropy(outputs.reshape({-1, outputs.size(-1)}), labels.reshape({-1}));
}

std::string CharTransformerModel::description() const {
  return "char_transformer(vocab=" + std::to_string(options_.vocab_size) +
         ", block=" + std::to_string(options_.block_size) +
         ", hidden=" + std::to_string(options_.hidden_size) +
         ", layers=" + std::to_string(options_.num_layers) + ", heads=" + std::to_string(options_.num_heads) +
         ")";
}

}  // namespace trainhook
