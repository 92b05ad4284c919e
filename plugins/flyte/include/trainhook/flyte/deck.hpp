// The log-history "deck": one self-contained HTML page (Flyte renders decks as
// HTML fragments) with a table of trainer_state.json's log_history and small
// inline SVG charts of the loss and the evaluation metrics. No scripts, no
// external assets.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace trainhook::flyte {

inline constexpr const char* kDeckFileName = "log_history.html";

// trainer_state: the TrainerState JSON (log_history may be missing or empty).
std::string render_log_history_deck(const nlohmann::json& trainer_state, const std::string& title);

std::string html_escape(const std::string& s);

}  // namespace trainhook::flyte
