// The jsonl logger's file format: one JSON object per line, each a
// log_history entry as trainer_state.json holds it (same keys, integers as
// integers, numbers in the shortest text that reads back to the same double,
// NaN and infinities as null as in trainer_state.json).
#pragma once

#include <trainhook/support/line_file.hpp>
#include <trainhook/support/log_history_file.hpp>

namespace trainhook::jsonl {

// The line for one entry (no newline).
std::string jsonl_line(const nlohmann::json& entry);

class JsonlFormat final : public support::LogHistoryFormat {
 public:
  void reset(const std::filesystem::path& file, const nlohmann::json& entries) override;
  void append(const std::filesystem::path& file, const nlohmann::json& entry) override;

 private:
  support::AppendFile out_;
};

}  // namespace trainhook::jsonl
