// The CLI's built-in models, chosen by name (ModelArguments::model). Torch-free
// header: the CLI builds models without including LibTorch.
#pragma once

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/data/data_files.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

class Model;

// "mlp", "cnn", "char_transformer".
std::vector<std::string> builtin_model_names();

// Throws std::invalid_argument naming the model (with the closest valid name)
// or the data mismatch (e.g. a cnn on features that are not a square image).
std::shared_ptr<Model> make_builtin_model(const ModelArguments& model, const DataArguments& data,
                                          const DataInfo& info);

// True for the --loss names that take real-valued labels (mse, l1, bce_with_logits).
bool real_valued_loss(const std::optional<std::string>& loss);

// The CLI's model: the TorchScript archive of --model_name_or_path (its
// forward's arguments matched to the training data's tensor names, the
// labels' dtype checked against --loss), else the built-in --model. Throws
// std::runtime_error / std::invalid_argument naming the file at fault.
std::shared_ptr<Model> make_cli_model(const ModelArguments& model, const DataArguments& data,
                                      const LoadedData& loaded);

// The arguments a built-in model is built from, as the JSON object the Trainer
// writes as config.json (TrainerOptions::model_config_json): "model" and the
// keys that model reads (hidden_size, num_layers, num_heads, dropout,
// image_size), named as their flags. Empty for a TorchScript model (its archive
// holds its architecture).
std::string model_config_json(const ModelArguments& model, const DataArguments& data);

}  // namespace trainhook
