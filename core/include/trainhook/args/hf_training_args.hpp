// training_args.json holds what HF's TrainingArguments knows, so that
// HfArgumentParser(TrainingArguments).parse_json_file reads it with its
// default settings (no allow_extra_keys); Trainhook's own arguments (plugins,
// callbacks, isolation, the launcher's rank) go to trainhook_args.json beside
// it. Either file, or both merged, is a valid --config. No LibTorch here.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace trainhook {

inline constexpr const char* kTrainhookArgsFile = "trainhook_args.json";

// Whether `name` is a field of HF's TrainingArguments in every transformers the
// tests check (4.47.1 and 5.24).
bool is_hf_training_argument(std::string_view name);

struct SplitTrainingArgs {
  nlohmann::json hf = nlohmann::json::object();         // training_args.json
  nlohmann::json trainhook = nlohmann::json::object();  // trainhook_args.json
};

// Splits to_json(TrainingArguments)'s object by is_hf_training_argument.
SplitTrainingArgs split_training_args(const nlohmann::json& all);

}  // namespace trainhook
