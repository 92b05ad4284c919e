#include <trainhook/models/model_factory.hpp>

#include <trainhook/common/closest_name.hpp>
#include <trainhook/data/tensor_dataset.hpp>
#include <trainhook/models/char_transformer.hpp>
#include <trainhook/models/cnn.hpp>
#include <trainhook/models/losses.hpp>
#include <trainhook/models/mlp.hpp>
#include <trainhook/models/torchscript_model.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <stdexcept>

namespace trainhook {

std::vector<std::string> builtin_model_names() { return {"mlp", "cnn", "char_transformer"}; }

bool real_valued_loss(const std::optional<std::string>& loss) {
  return loss && (*loss == "mse" || *loss == "l1" || *loss == "bce_with_logits");
}

std::shared_ptr<Model> make_cli_model(const ModelArguments& model, const DataArguments& data,
                                      const LoadedData& loaded) {
  if (!model.model_name_or_path) {
    if (model.loss) {
      throw std::invalid_argument(
          "--loss applies to a TorchScript model (--model_name_or_path); the built-in " + model.model +
          " has its own loss");
    }
    if (loaded.info.real_labels) {
      throw std::invalid_argument((data.train_file ? *data.train_file : std::string("the training data")) +
                                  ": real-valued labels need a regression model: a TorchScript model "
                                  "(--model_name_or_path) with --loss mse or l1");
    }
    return make_builtin_model(model, data, loaded.info);
  }
  auto ts =
      std::make_shared<TorchScriptModel>(*model.model_name_or_path, TorchScriptOptions().loss(model.loss));
  const std::pair<const std::shared_ptr<TensorDataset>*, const std::optional<std::string>*> sets[] = {
      {&loaded.train, &data.train_file},
      {&loaded.validation, &data.validation_file},
      {&loaded.test, &data.test_file}};
  bool bound = false;
  for (const auto& [set, file] : sets) {
    if (!*set) continue;
    const std::string source =
        *file ? **file : (data.train_file ? *data.train_file : std::string("the data"));
    if (model.loss) check_labels_fit_loss(*model.loss, (*set)->labels(), source);
    if (!bound) {
      ts->bind((*set)->names(), (*set)->input_name(), (*set)->label_name(), source);
      bound = true;
    }
  }
  return ts;
}

std::shared_ptr<Model> make_builtin_model(const ModelArguments& model, const DataArguments& data,
                                          const DataInfo& info) {
  const bool text = info.kind == DataKind::text || info.kind == DataKind::tokens;
  if (model.model == "mlp" || model.model == "cnn") {
    if (text) {
      throw std::invalid_argument(
          "model " + model.model +
          " needs tabular data (a .csv file or .npy arrays); for text or token files use "
          "--model char_transformer");
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
          "model char_transformer needs a text file (.txt) or token files (.bin/.npy); for a .csv use mlp or "
          "cnn");
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

std::string model_config_json(const ModelArguments& model, const DataArguments& data) {
  if (model.model_name_or_path) return {};
  nlohmann::json c = {{"model", model.model}, {"hidden_size", model.hidden_size}, {"dropout", model.dropout}};
  if (model.model == "mlp" || model.model == "char_transformer") c["num_layers"] = model.num_layers;
  if (model.model == "char_transformer") c["num_heads"] = model.num_heads;
  if (model.model == "cnn" && data.image_size) c["image_size"] = *data.image_size;
  return c.dump();
}

}  // namespace trainhook
