// The CLI's built-in models, chosen by name (ModelArguments::model). Torch-free
// header: the CLI builds models without including LibTorch.
#pragma once

#include <trainhook/data/data_files.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <memory>
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

}  // namespace trainhook
