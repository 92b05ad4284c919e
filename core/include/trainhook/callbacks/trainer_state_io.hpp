// trainer_state.json in the Hugging Face layout: the state as JSON with 2-space
// indent, keys sorted at every level, ending with a newline; readable by HF's
// TrainerState.load_from_json.
#pragma once

#include <trainhook/callbacks/state.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>

namespace trainhook {

nlohmann::json to_json(const TrainerState& s);
// Throws std::runtime_error naming the offending key when the JSON is malformed.
TrainerState state_from_json(const nlohmann::json& j);

// Writes atomically (temporary file + rename). Throws on I/O error naming the path.
void save_trainer_state(const TrainerState& s, const std::filesystem::path& file);
// Throws std::runtime_error naming the file on a missing file or bad JSON.
TrainerState load_trainer_state(const std::filesystem::path& file);

// HF's TrainerControl entry of stateful_callbacks: {"args": {5 flags}, "attributes": {}}.
nlohmann::json control_to_stateful(const TrainerControl& c);

}  // namespace trainhook
