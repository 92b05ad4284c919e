// The offline spool: a run written to disk instead of the server, in our own
// documented format (docs/wandb_protocol.md), uploaded later by
// `trainhook wandb-sync <dir>` with exactly the offsets it would have had online.
//
//   <WANDB_DIR>/wandb/offline-run-<YYYYMMDD_HHMMSS>-<run_id>/
//     run.json       run metadata: the UpsertBucket variables, base_url, the
//                    history offset of the first spooled line, why it is offline
//     history.jsonl  history lines, one JSON object per line, in order; line i
//                    belongs at offset history_offset + i
//     summary.json   the latest summary line (rewritten whole, atomically)
//     exit.json      {"exitcode": N} once the run ended (absent: still running
//                    or crashed; sync then leaves the run open)
//     sync.json      written by wandb-sync: {"history_lines": k, "complete": b}
//                    = how much the server acknowledged (sync resumes there)
//
// Writer and reader are used from one thread each; the writer flushes every
// append so a crash loses at most a torn last line, which the reader ignores.
#pragma once

#include <trainhook/wandb/graphql.hpp>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::wandb {

struct OfflineMeta {
  RunSpec spec;
  std::string base_url;        // informational; sync uses WANDB_BASE_URL when set
  int64_t history_offset = 0;  // offset of history.jsonl's first line on the server
  std::string reason;          // "WANDB_MODE=offline", "server unreachable ...", ...
  std::string created;         // ISO 8601 UTC
};

// offline-run-<YYYYMMDD_HHMMSS>-<run_id> (UTC).
std::string offline_dir_name(std::time_t when, const std::string& run_id);

class OfflineRunWriter {
 public:
  // Creates <root>/wandb/<offline_dir_name(...)> and writes run.json. Throws
  // std::runtime_error naming the folder or file on failure.
  OfflineRunWriter(const std::filesystem::path& root, const OfflineMeta& meta, std::time_t now);
  void append(const std::vector<std::string>& lines);
  void append(const std::string& line) { append(std::vector<std::string>{line}); }
  void write_summary(const std::string& line);
  void finish(int exitcode);
  const std::filesystem::path& dir() const noexcept { return dir_; }
  int64_t lines_written() const noexcept { return lines_; }

 private:
  std::filesystem::path dir_;
  std::ofstream history_;
  int64_t lines_ = 0;
};

struct OfflineRun {
  std::filesystem::path dir;
  OfflineMeta meta;
  std::vector<std::string> lines;
  std::optional<std::string> summary;
  std::optional<int> exitcode;
  int64_t synced_lines = 0;  // from sync.json
  bool synced_complete = false;
  bool torn_last_line = false;  // a crash cut the last line; it was ignored
};

// Throws std::runtime_error naming the file and what is wrong with it.
OfflineRun read_offline_run(const std::filesystem::path& dir);
void write_sync_state(const std::filesystem::path& dir, int64_t synced_lines, bool complete);

// Writes text to file through a temporary and a rename (readers never see half).
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace trainhook::wandb
