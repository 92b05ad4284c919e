// The checks of `trainhook plugin check`, one file each; the helper
// (check_main.cpp) runs one group per process so that a crash or a hang in
// one leaves the others to run. Each reports its results (check_output.hpp)
// under the ids that plugin_host/check/plugin_check.cpp lists per group.
#pragma once

#include "call_watch.hpp"
#include "check_output.hpp"
#include "process_snapshot.hpp"

#include <trainhook/abi.h>

#include <map>
#include <string>

namespace trainhook::plugin_check {

struct CheckContext {
  std::string library;                         // as given
  const th_plugin_info* info = nullptr;        // the entry's answer
  std::string cwd;                             // the fresh, empty working folder
  std::string output_dir;                      // the run's output_dir (not under cwd)
  std::map<std::string, std::string> configs;  // plugin_config section by callback
  std::string readme;                          // a README.md to hold the key table, or empty
  double step_budget_ms = 2;                   // per-step events (mean per call)
  double event_budget_ms = 2000;               // the others
  ProcessSnapshot before;                      // taken before the library was loaded
  Progress progress;
  CallWatch watch;  // every call of the events group's runs
};

// group "entry": entry_table, config_keys, readme_table
void check_entry_table(CheckContext& ctx);
void check_config_keys(CheckContext& ctx);
// group "events": events, resume, with every call watched (ctx.watch), then
// what the run left and what the watch saw (process_footprint_check.cpp)
void check_events(CheckContext& ctx);
void check_process_footprint(CheckContext& ctx);
// group "hostile": hostile_inputs
void check_hostile_inputs(CheckContext& ctx);
// group "timing": event_time
void check_event_time(CheckContext& ctx);
// group "memory": memory_growth
void check_memory_growth(CheckContext& ctx);

}  // namespace trainhook::plugin_check
