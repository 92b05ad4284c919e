// `trainhook plugin check LIBRARY`: what a pack author runs before shipping a
// plugin library (as pluginval is for audio plugins). Each group of checks
// runs in a helper process of its own (trainhook-plugin-check, in
// libexec/trainhook; core/src/plugin_host/check/) in a fresh temporary folder,
// so a library that crashes, hangs or damages its process is judged, never
// obeyed: a crash is a FAIL naming the signal and the event it happened in
// (an abort inside a plugin call: an exception across the C ABI), a group
// that does not end within the time limit is a FAIL naming the event it hung
// in. The results, in the order of kPluginChecks:
//   entry_table       names, kinds, versions, ABI major/minor, event masks, descriptions
//   config_keys       the plugin_config keys each callback declares; unknown keys refused
//   readme_table      (with a README) its "| key |" table names exactly those keys
//   events            every event in the Hugging Face order: 2 train() cycles, evaluate, save, predict
//   resume            the state saved at a checkpoint, loaded into new instances that resume
//   hostile_inputs    NaN/inf losses, empty and huge logs, non-ASCII keys, an older trainer, rank 1 of 4
//   exceptions        no C++ exception crosses the C ABI
//   files_in_cwd      nothing written to the working directory (only under output_dir)
//   threads_left      no thread outlives destroy()
//   child_processes   no process outlives destroy()
//   signal_handlers   every signal disposition as it was
//   std_descriptors   stdin, stdout and stderr still open and the same files
//   working_directory unchanged
//   event_time        mean time per call within budget (per-step events, and the others)
//   memory_growth     resident memory does not grow step after step
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace trainhook {

struct PluginCheckOptions {
  std::filesystem::path library;
  // plugin_config sections by callback name: a JSON object each.
  std::map<std::string, std::string> configs;
  std::filesystem::path readme;   // empty: no readme_table check
  double step_budget_ms = 2;      // mean per call of a per-step event
  double event_budget_ms = 2000;  // mean per call of any other event
  std::chrono::milliseconds group_time_limit{std::chrono::seconds(120)};
  bool keep_folder = false;  // leave the temporary folder (its path is in the report)
};

enum class CheckVerdict { pass, warn, fail, skip };

struct PluginCheckResult {
  std::string id;     // "threads_left"
  std::string title;  // "threads left after destroy"
  CheckVerdict verdict = CheckVerdict::skip;
  std::string detail;  // may hold several lines
};

struct PluginCheckReport {
  std::vector<PluginCheckResult> results;  // in the order of the list above
  std::filesystem::path folder;            // the temporary folder (removed unless kept)
  bool failed() const;
};

// "PASS", "WARN", "FAIL", "SKIP".
const char* verdict_name(CheckVerdict v);

// Runs every group; never throws for what the library does. Throws
// PluginError when the helper cannot be found or started.
PluginCheckReport run_plugin_check(const PluginCheckOptions& options);

}  // namespace trainhook
