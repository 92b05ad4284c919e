// The "csv" integration (--report_to csv): log_history as CSV with a header that grows as keys appear.
// The writer thread, the flush at each save and the resume rule are support's
// LogHistoryFileCallback; this plugin adds the format (CsvFormat).
#pragma once

#include <trainhook/support/log_history_file.hpp>

namespace trainhook::csv {

class CsvCallback final : public support::LogHistoryFileCallback {
 public:
  explicit CsvCallback(trainhook::Setup& setup);
};

}  // namespace trainhook::csv
