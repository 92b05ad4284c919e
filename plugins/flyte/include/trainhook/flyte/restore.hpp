// Restoring the previous attempt: find the newest COMPLETE checkpoint under the
// previous prefix (its manifest present and every file matching it), download
// it into output_dir and say which to resume from. Partial or corrupt uploads
// are skipped with a warning.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/support/log.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::flyte {

struct RestoreResult {
  std::optional<std::filesystem::path> resume_from;  // newest complete checkpoint, local
  std::vector<std::string> restored;                 // names downloaded or verified in place
  std::vector<std::string> skipped;                  // "checkpoint-30: no manifest (partial upload)"
};

// all=false: stop at the newest complete checkpoint; all=true: restore every
// complete one (Flyte's "download the whole prefix"), newest first. A local
// folder that already matches its manifest is used without downloading.
RestoreResult restore_checkpoints(Store& prev, const std::filesystem::path& output_dir, bool all,
                                  const support::RetryPolicy& retry, const Cancellation& cancel,
                                  const support::Logger& log);

}  // namespace trainhook::flyte
