// What the jsonl and csv loggers share: a Kind::integration callback that
// writes the run's log_history to a file in output_dir, one line per log
// record, from the base's worker thread (support::Integration); the
// plugins write only the file format (LogHistoryFormat).
//
// What a line holds: the record the trainer appends to log_history, with its
// keys as log_history has them: the on_log values, "epoch", and "step"
// (global_step, an integer; on_log's values carry no "step" in HF either);
// num_input_tokens_seen is an integer as in log_history.
//
// Resume, and a fresh run over an old file: at on_train_begin the file is
// replaced (atomically) by the state's log_history, which on a resumed run is
// the checkpoint's (HF restores log_history from trainer_state.json) and on a
// fresh run is empty; lines a killed run wrote past its last checkpoint go, so
// the file keeps equal to trainer_state.json's log_history. Records logged
// after train end (the final evaluate()) are appended.
//
// Threads: on_* run on the training thread and only build a record and queue
// it (bounded, queue_size); parsing the state, formatting and every write
// happen on the worker. Records that could not be queued or written are
// counted and reported at train end (and when the callback goes away).
#pragma once

#include <trainhook/options.hpp>
#include <trainhook/plugin.hpp>
#include <trainhook/support/integration.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::support {

// One on_log, as copied on the training thread (plain vectors: the JSON
// object is built on the worker). The number keys are shared with the
// records before it while they stay the same (LogKeys).
struct LogRecord {
  std::shared_ptr<const std::vector<std::string>> keys;  // keys->size() == values.size()
  std::vector<double> values;
  std::vector<std::pair<std::string, std::string>> strings;
  double epoch = 0;
  int64_t step = 0;
};

// The number keys of the last record captured. A run logs the same keys step
// after step: a record then shares them instead of copying every name again
// on the training thread.
class LogKeys {
 public:
  std::shared_ptr<const std::vector<std::string>> of(const trainhook::Values& logs);

 private:
  std::shared_ptr<const std::vector<std::string>> last_;
};

// One queued item: a log record, or (reset) the trainer state's JSON text
// whose log_history replaces the file.
struct LogHistoryItem {
  bool reset = false;
  LogRecord record;        // reset == false
  std::string state_json;  // reset == true: th_host.trainer_state_json at train begin
};

// A file format. Called on the worker thread only, one call at a time.
class LogHistoryFormat {
 public:
  virtual ~LogHistoryFormat() = default;
  // Replaces the file with `entries` (a JSON array of objects), atomically.
  virtual void reset(const std::filesystem::path& file, const nlohmann::json& entries) = 0;
  // Appends one entry; the line reaches the file before this returns. The
  // first call after construction (no reset) continues an existing file.
  virtual void append(const std::filesystem::path& file, const nlohmann::json& entry) = 0;
};

// The keys both loggers read ("file" and "queue_size"), declared once in
// table(). Errors name the plugin and key.
class LogHistoryFileOptions {
  // The file name: absolute, or relative to output_dir.
  TRAINHOOK_OPTION(std::string, file, "");

 public:
  // Records queued for the writer thread at most; more are dropped and counted.
  TRAINHOOK_OPTION(int64_t, queue_size, 10000);

 public:
  // The table of one logger: `plugin` names its section, `default_file` is its file.
  static OptionTable<LogHistoryFileOptions> table(const std::string& plugin, const std::string& default_file);
  static LogHistoryFileOptions from_json(const std::string& plugin, const std::string& config_json,
                                         const std::string& default_file);
};

// Copies the on_log values and the step (training thread).
LogRecord capture_log(const trainhook::Values& logs, const th_state& state, LogKeys& keys);
// The entry log() appended to log_history for that record (worker thread).
nlohmann::json log_history_entry(const LogRecord& record);

class LogHistoryFileCallback : public Integration<LogHistoryItem> {
 public:
  using FormatFactory = std::function<std::unique_ptr<LogHistoryFormat>()>;
  // `plugin`: the name in messages ("jsonl: wrote 12 lines to ...").
  LogHistoryFileCallback(trainhook::Host host, std::string plugin, LogHistoryFileOptions options,
                         FormatFactory make_format);

  void on_log(trainhook::Event& e) override;
  // Waits (bounded) until the queued lines are in the file, so once on_save
  // returns the file holds the checkpoint's log_history (the trainer writes
  // the folder first, as HF does; a run killed later and resumed from it
  // loses no line).
  void on_save(trainhook::Event& e) override;

  // The file: `file` when absolute, else under output_dir.
  std::filesystem::path file_path() const;

 private:
  std::unique_ptr<Delivery<LogHistoryItem>> open_run(trainhook::Event& e) override;
  // The base's sequence: a run still open at train begin (an evaluate()
  // before train()) is closed first; the new one begins with the reset.
  bool ends_open_run_at_begin() const override { return true; }
  void run_began(trainhook::Event& e, bool opened) override;

  std::string plugin_;
  LogHistoryFileOptions options_;
  FormatFactory make_format_;
  LogKeys keys_;
};

}  // namespace trainhook::support
