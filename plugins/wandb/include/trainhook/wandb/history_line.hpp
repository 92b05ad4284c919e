// Turning the trainer's logs into W&B history lines and the run summary.
// Pure functions and a small value type; no I/O.
//
// HF WandbCallback.on_log: train_runtime, train_samples_per_second,
// train_steps_per_second, train_loss and total_flos go to the run summary
// only; everything else is renamed by rewrite_logs (eval_x -> eval/x,
// test_x -> test/x, x -> train/x) and logged with train/global_step.
// The W&B client adds _step (0, 1, 2, ... per logged line), _runtime (seconds
// since the run started) and _timestamp (Unix seconds), and keeps the last
// value of every key in the summary.
#pragma once

#include <trainhook/support/log_values.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainhook::wandb {

// A number as W&B's Python client writes it: shortest round-trip text,
// integers without a fraction, and NaN / Infinity / -Infinity (which JSON
// lacks but the W&B backend and Python's json module read).
std::string json_number(double v);
// A JSON string literal (quoted, escaped).
std::string json_string(std::string_view s);

// True for the keys HF puts in the summary only.
bool is_summary_only_key(std::string_view key);

// One logged record, split and rendered on the training thread; fields are
// (key, JSON value text) in the order they were logged.
struct LogRecord {
  std::vector<std::pair<std::string, std::string>> history;
  std::vector<std::pair<std::string, std::string>> summary;
  double timestamp = 0;  // Unix seconds when it was logged
};

// What one log event gave, as the training thread copies it: the values are
// turned into JSON text (make_log_record) on the worker thread, not per step
// on the training thread.
struct LoggedValues {
  support::CopiedValues values;
  std::optional<int64_t> global_step;  // on_log: train/global_step; on_predict: none
  double timestamp = 0;                // Unix seconds when it was logged
};

// on_log: split per HF and add train/global_step (with_global_step).
// on_predict passes with_global_step = false (HF logs the metrics alone).
LogRecord make_log_record(const std::vector<std::pair<std::string, double>>& numbers,
                          const std::vector<std::pair<std::string, std::string>>& strings,
                          std::optional<int64_t> global_step, double timestamp);
inline LogRecord make_log_record(const LoggedValues& v) {
  return make_log_record(v.values.numbers, v.values.strings, v.global_step, v.timestamp);
}

// The history line: the record's fields, then _step, _runtime, _timestamp.
// A key logged twice keeps its last value (in the position of the first).
std::string history_line(const LogRecord& record, int64_t step, double runtime);

// The run summary: last value per key. Rendered as one JSON object line with
// keys sorted; "_wandb": {"runtime": seconds} as the W&B client adds it.
class Summary {
 public:
  void set(const std::string& key, std::string json_value) { values_[key] = std::move(json_value); }
  // Last values of a history line's fields plus _step/_runtime/_timestamp.
  void update(const LogRecord& record, int64_t step, double runtime);
  // Seeds from a server's summaryMetrics (JSON object text) when resuming.
  void load(const std::string& summary_json);
  std::string line() const;
  bool empty() const noexcept { return values_.empty(); }
  const std::map<std::string, std::string>& values() const noexcept { return values_; }

 private:
  std::map<std::string, std::string> values_;
  double runtime_ = 0;
};

}  // namespace trainhook::wandb
