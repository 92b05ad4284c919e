// Which trained model an evaluate/predict-only run (no --do_train) loads.
// Evaluating a freshly initialised model and overwriting eval_results.json
// with its numbers is a silent wrong result, so there is always a
// trained model or an error. No LibTorch in this header.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <filesystem>

namespace trainhook {

// --resume_from_checkpoint PATH: that checkpoint (or model file); "true" is
// refused (it means "continue training from the latest checkpoint"); else the
// final model.pt in output_dir. Throws std::runtime_error naming the flag and
// the path when there is none.
std::filesystem::path evaluate_only_model(const TrainingArguments& args);

}  // namespace trainhook
