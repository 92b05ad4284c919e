// Metrics as HF's Trainer reports them: log_metrics() prints a block
// "***** <split> metrics *****", save_metrics() writes <split>_results.json and
// merges into all_results.json. No LibTorch here.
#pragma once

#include <trainhook/trainer/metrics.hpp>

#include <filesystem>
#include <map>
#include <ostream>
#include <string>

namespace trainhook {

// HF's metrics_format: *_runtime as h:mm:ss.ss, *_mem_* as MB, total_flos as GF,
// other values as numbers.
std::string format_metric(const std::string& key, double value);
void log_metrics(std::ostream& out, const std::string& split, const Metrics& metrics);
// Writes <dir>/<split>_results.json and, when combined, updates
// <dir>/all_results.json (merging with what it holds). Atomic writes.
// Throws std::runtime_error naming the file on an I/O error.
void save_metrics(const std::filesystem::path& dir, const std::string& split, const Metrics& metrics,
                  bool combined = true);

}  // namespace trainhook
