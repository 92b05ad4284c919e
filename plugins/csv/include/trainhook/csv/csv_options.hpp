// The csv integration's settings: the log-history file settings every file
// logger shares (support's LogHistoryFileOptions: file, queue_size), under the
// plugin_config section "csv", with log_history.csv as the default file.
#pragma once

#include <trainhook/support/log_history_file.hpp>

#include <string>
#include <utility>

namespace trainhook::csv {

class CsvOptions : public support::LogHistoryFileOptions {
 public:
  static CsvOptions from_json(const std::string& config_json) {
    return CsvOptions(support::LogHistoryFileOptions::from_json("csv", config_json, "log_history.csv"));
  }

 private:
  explicit CsvOptions(support::LogHistoryFileOptions o) : support::LogHistoryFileOptions(std::move(o)) {}
};

}  // namespace trainhook::csv
