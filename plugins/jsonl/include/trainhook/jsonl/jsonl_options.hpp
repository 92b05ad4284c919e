// The jsonl integration's settings: the log-history file settings every file
// logger shares (support's LogHistoryFileOptions: file, queue_size), under the
// plugin_config section "jsonl", with log_history.jsonl as the default file.
#pragma once

#include <trainhook/support/log_history_file.hpp>

#include <string>
#include <utility>

namespace trainhook::jsonl {

class JsonlOptions : public support::LogHistoryFileOptions {
 public:
  static JsonlOptions from_json(const std::string& config_json) {
    return JsonlOptions(support::LogHistoryFileOptions::from_json("jsonl", config_json, "log_history.jsonl"));
  }

 private:
  explicit JsonlOptions(support::LogHistoryFileOptions o) : support::LogHistoryFileOptions(std::move(o)) {}
};

}  // namespace trainhook::jsonl
