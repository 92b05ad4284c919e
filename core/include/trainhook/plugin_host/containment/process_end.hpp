// The end of a run's process, where in-process plugins still run code after
// every file of the run is written: their destroy(), their own threads, and
// their libraries' destructors, which run at exit() (plugin libraries are
// loaded with RTLD_NODELETE and never unloaded before). A crash there is
// named by the crash handler and must not turn a finished run into a failure;
// a hang there must not hold the process (and its output_dir lock).
//
// Who calls it: `trainhook train` once its run has written everything
// (mark_run_results_complete), and after Trainer::end_callbacks
// (bound_process_end). Owned by plugin_host (the reliability work).
#pragma once

#include <string>

namespace trainhook {

// From now on every file the run writes is on disk in `output_dir`. A fatal
// signal after this (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, on any thread)
// prints the crash line (naming the plugin when its addresses do) followed by
// "the run's results are complete: ...", and ends the process with
// `exit_status` (the run's own: 0 for a run that ended normally) instead of
// dying of the signal (128 + signal). Applies to this process only (not to a
// child forked later).
void mark_run_results_complete(const std::string& output_dir, int exit_status);

// Whether mark_run_results_complete was called in this process.
bool run_results_complete() noexcept;

// The in-process plugin call running now, or the last one (any thread): the
// plugin's name ("" when unknown), its file, the callback and what it ran
// ("on_log", "destroy", ...). All "" before the first call.
struct PluginCallSite {
  std::string plugin;
  std::string file;
  std::string callback;
  std::string what;
};
PluginCallSite last_plugin_call();

// The files of the plugin libraries loaded into this process, in load order.
std::string loaded_plugin_files();

// Bounds the rest of the process's life once the callbacks are destroyed:
// when the process has not ended `seconds` after this call (a plugin library's
// destructor blocks at exit, say), a watchdog thread writes one line naming
// the plugin libraries loaded and `flag` (the setting that gave the bound),
// and ends the process with `exit_status` (_exit: the output_dir lock is
// released with it). seconds <= 0: no bound. Whatever `seconds`, an exit()
// or quick_exit() called while the process ends (a plugin library's
// destructor calling exit(3)) is named and the process ends with
// `exit_status`, not the status it passed. Call once, just before returning
// from main's command.
void bound_process_end(double seconds, const std::string& flag, int exit_status);

}  // namespace trainhook
