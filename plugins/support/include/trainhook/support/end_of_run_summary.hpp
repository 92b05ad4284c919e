// The last line every reporting integration (mlflow, wandb, tensorboard,
// flyte) writes when its run ends, worded once here so that the four tell the
// same truth the same way: the run's real final status, how many records
// reached their destination, how many wait on disk and where, and how to send
// those later. A plugin fills an EndOfRunSummary from what it measured; this
// file owns only the wording.
#pragma once

#include <trainhook/abi.h>
#include <trainhook/support/integration.hpp>
#include <trainhook/support/log.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace trainhook::support {

struct EndOfRunSummary {
  std::string integration;    // "MLflow", "wandb", "TensorBoard", "flyte"
  std::string run;            // the run's id, file or destination; empty: no run exists
  std::string no_run_reason;  // with an empty `run`: why none exists (said in the line)
  std::string status;         // the run's final status: "FINISHED", "FAILED" or "KILLED"
  std::string failure;        // with FAILED/KILLED: why, e.g. "error at step 7: boom"
  std::string unit = "records";
  uint64_t delivered = 0;   // reached the destination
  uint64_t spooled = 0;     // kept on disk for later
  std::string spool_path;   // where they are kept (file or folder)
  std::string resend;       // how to send them later: a command or what does it
  uint64_t lost = 0;        // neither delivered nor kept (rejected, dropped, unwritable)
  std::string lost_reason;  // why they were lost
  std::string note;         // anything else the line must say (appended last, after "; ")
};

// One line, e.g.
//   MLflow run 3f2a FAILED (error at step 7: boom): 40 records delivered, 9 spooled
//   in /out/mlflow_spool/3f2a.jsonl; send them later: rerun with MLFLOW_RUN_ID=3f2a
//   MLflow run not created (the server answered ... not JSON); training FINISHED:
//   0 records delivered, 49 spooled in /out/mlflow_spool/unassigned.jsonl; send them
//   later: the next run with this output_dir delivers them
// The failure reason is cut to its first line (messages may hold many).
std::string format_end_of_run(const EndOfRunSummary& s);

// True when the line reports something the user must act on or has lost
// (spooled or lost records, no run, a run that did not finish): the plugin
// logs it as a warning, else as info.
bool end_of_run_needs_attention(const EndOfRunSummary& s) noexcept;

// "<kind> at step N: message" for an EXCEPTION's th_failure (the reason the
// integrations write into their run: TensorBoard's text, wandb's summary, the
// end-of-run line). The message is kept whole here; format_end_of_run cuts it.
std::string describe_failure(const th_failure& f);

// The same for the integration base's RunEnd: "<kind> at step N: message"
// for a failure known from on_exception, "stopped by signal N" for a
// first-signal stop, else "".
std::string describe_run_end(const RunEnd& end);

// "FINISHED", "FAILED" or "KILLED" (MLflow's run statuses, used by every line).
const char* run_status_name(RunOutcome outcome) noexcept;

// "finished", "failed" or "killed", for prose ("run killed (stopped by signal 15)").
const char* run_outcome_name(RunOutcome outcome) noexcept;

// Why records refused by a full queue (WorkerStats::dropped) were lost, the
// same words in every integration: "N dropped because the queue of C records
// was full; raise <setting>" (without the advice when `setting` is empty).
std::string queue_full_reason(uint64_t dropped, uint64_t capacity, std::string_view setting = {});

// Logs the line: a warning when it needs attention (or `warn` says so), else info.
void log_end_of_run(const Logger& log, const EndOfRunSummary& s, bool warn = false);

}  // namespace trainhook::support
