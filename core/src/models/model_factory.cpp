#include <trainhook/models/model_factory.hpp>

#include <trainhook/common/closest_name.hpp>
#include <trainhook/models/char_transformer.hpp>
#include <trainhook/models/cnn.hpp>
#include <trainhook/models/mlp.hpp>

#include <cmath>
#include <stdexcept>

namespace trainhook {

std::vector<std::string> builtin_model_names() { return {"mlp", "cnn", "char_transformer"}; }

std::shared_ptr<Model> make_builtin_model(const ModelArguments& model, const DataArguments& data,
                                          const DataInfo& info) {
  const bool text = info.kind == DataKind::text;
  if (model.model == "mlp" || model.model == "cnn") {
    if (text) {
      throw std::invalid_argument("model " + model.model +
                                  " needs tabular data (a .csv file); for text use --model char_transformer");
    }
    if (model.model == "mlp") {
      return std::make_shared<MlpModel>(MlpOptions{info.num_features, info.num_classes, model.hidden_size,
                                                   model.num_layers, model.dropout});
    }
    auto side = data.image_size.value_or(static_cast<int64_t>(std::lround(std::sqrt(info.num_features))));
    if (side * side != info.num_features) {
      throw std::invalid_argument(
          "model cnn: " + std::to_string(info.num_features) + " features are not a square image" +
          (data.image_size ? " of image_size " + std::to_string(*data.image_size) : std::string()));
    }
    CnnOptions o;
    o.image_size = side;
    o.num_classes = info.num_classes;
    o.hidden_size = model.hidden_size;
    o.dropout = model.dropout;
    return std::make_shared<CnnModel>(o);
  }
  if (model.model == "char_transformer") {
    if (!text) {
      throw std::invalid_argument(
          "model char_transformer needs a text file (.txt); for a .csv use mlp or cnn");
    }
    return std::make_shared<CharTransformerModel>(CharTransformerOptions{info.vocab_size, info.block_size,
                                                                         model.hidden_size, model.num_layers,
                                                                         model.num_heads, model.dropout});
  }
  const std::string close = closest_name(model.model, builtin_model_names());
  throw std::invalid_argument("--model: unknown model '" + model.model + "'" +
                              (close.empty() ? std::string() : " (did you mean '" + close + "'?)") +
                              "; expected mlp, cnn or char_transformer");
}

}  // namespace trainhook
