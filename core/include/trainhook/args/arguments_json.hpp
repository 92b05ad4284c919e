// The argument structs (training_arguments.hpp) as JSON with the HF key names,
// from the option table, so a field added to the parser is written without a
// second list to keep in step. training_args.json, the plugins and the resume
// check see this form. No LibTorch here.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <nlohmann/json.hpp>

namespace trainhook {

// JSON with the HF key names (as training_args.json and plugins see it): every
// field, optionals unset as null, plugin_config as the object it is.
nlohmann::json to_json(const TrainingArguments& a);
// The CLI's model and data arguments with their flag names (same conventions).
nlohmann::json to_json(const ModelArguments& a);
nlohmann::json to_json(const DataArguments& a);

}  // namespace trainhook
