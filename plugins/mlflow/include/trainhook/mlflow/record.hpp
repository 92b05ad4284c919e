// What the training thread hands to the mlflow worker, and its spool form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace trainhook::mlflow {

struct Record {
  enum class Kind : uint8_t { metric, artifact_dir, end_run };
  Kind kind = Kind::metric;
  std::string key;        // metric: sanitised name; artifact_dir: local folder; end_run: status
  double value = 0.0;     // metric value
  int64_t timestamp = 0;  // ms since the epoch, fixed when enqueued (retries resend it as is)
  int64_t step = 0;       // metric: global_step; end_run: end_time is `timestamp`
  std::string reason;     // end_run: the kFailureTag value, "" for none (a run that did not fail)

  static Record metric(std::string key, double value, int64_t timestamp_ms, int64_t step);
  static Record artifact_dir(std::string dir, int64_t step);
  static Record end_run(std::string status, int64_t end_time_ms, std::string reason = {});
};

// The tag a failed run carries: "<kind>: <message>" (on_exception, ABI 1.3).
inline constexpr const char* kFailureTag = "trainhook.failure";
// MLflow's limit on a tag value, in characters.
inline constexpr size_t kMaxTagValueChars = 8000;
// `value` cut to kMaxTagValueChars characters (UTF-8 code points), ending in
// " [cut]" when it was cut; never splits a character.
std::string cut_tag_value(const std::string& value);

// One JSON line (no newline) and back. from_line returns nullopt for a line
// that is not a record (reported by the caller).
std::string to_line(const Record& r);
std::optional<Record> from_line(const std::string& line);

// MLflow's metric name rule as HF applies it: [^0-9A-Za-z_\-. :/] -> '_'.
std::string sanitize_metric_name(const std::string& name);

}  // namespace trainhook::mlflow
