// Whether a checkpoint belongs to the run that resumes it: after
// --overwrite_output_dir and a kill, the next run found the *old* run's
// checkpoint-360 (max_steps 360) and resumed it for a run of max_steps 180.
// The checkpoint's training_args.json is compared with this run's arguments,
// given as the JSON object training_args.json is written from
// (to_json(TrainingArguments): the trainer's), over the keys that shape a run.
// No LibTorch here.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook {

// "max_steps: 360 in the checkpoint, 180 now" for every differing key that
// shapes the run (steps, epochs, seed, batch, optimiser and schedule);
// empty when they agree or the checkpoint has no training_args.json.
std::vector<std::string> resume_argument_differences(const std::filesystem::path& checkpoint,
                                                     const nlohmann::json& run_arguments);

// found_automatically (no --resume_from_checkpoint, or `true`): any
// difference throws std::runtime_error listing them and the two ways on.
// Given by path: returns the differences for the caller to warn about, as HF
// allows resuming with other arguments.
std::vector<std::string> check_resume_compatibility(const std::filesystem::path& checkpoint,
                                                    const nlohmann::json& run_arguments,
                                                    bool found_automatically);

// "hidden_size: 16 saved, 32 now (--hidden_size)" for every key of
// the model's config.json (TrainerOptions::model_config_json) that differs from
// `folder`/config.json; empty when they agree, or either is absent (a
// checkpoint written before config.json existed: the shape check still runs).
std::vector<std::string> model_config_differences(const std::filesystem::path& folder,
                                                  const std::string& model_config_json);
// Throws std::runtime_error listing model_config_differences, if any.
void check_model_config(const std::filesystem::path& folder, const std::string& model_config_json);

}  // namespace trainhook
