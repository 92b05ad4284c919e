// The "jsonl" integration (--report_to jsonl): log_history as one JSON object per line.
// The writer thread, the flush at each save and the resume rule are support's
// LogHistoryFileCallback; this plugin adds the format (JsonlFormat).
#pragma once

#include <trainhook/support/log_history_file.hpp>

namespace trainhook::jsonl {

class JsonlCallback final : public support::LogHistoryFileCallback {
 public:
  explicit JsonlCallback(trainhook::Setup& setup);
};

}  // namespace trainhook::jsonl
