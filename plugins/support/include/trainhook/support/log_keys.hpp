// Metric-name helpers shared by the tracking integrations.
#pragma once

#include <string>
#include <string_view>

namespace trainhook::support {

// HF rewrite_logs: "eval_x" -> "eval/x", "test_x" -> "test/x", anything else
// -> "train/x". Used by integrations that group metrics by phase (W&B, ...).
std::string rewrite_log_key(std::string_view key);

// The same mapping without allocating, for writers on a hot path (e.g. an
// event writer that emits prefix and name separately): prefix is "eval/",
// "test/" or "train/" (static storage), name a view into `key`.
struct LogKeyParts {
  std::string_view prefix;
  std::string_view name;
};
LogKeyParts split_log_key(std::string_view key) noexcept;

// Replaces every character outside `allowed` with '_' (e.g. MLflow's metric
// names: [0-9A-Za-z_\-. :/]). `allowed` lists the extra characters besides
// ASCII letters and digits.
std::string sanitize_key(std::string_view key, std::string_view allowed_extra);

}  // namespace trainhook::support
