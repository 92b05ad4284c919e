// A crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) on any thread is
// attributed to the plugin library that holds its addresses: the callback and
// event when a PluginCallScope is active on the crashing thread, otherwise the
// library holding the faulting instruction, the faulting address or a return
// address on the crashing thread's stack (plugin_address_table.hpp), such as a
// thread the plugin started or its library's destructor at exit. The line is
// written with write(2) only. Then the process dies of the signal as before
// (GStreamer's registry does the same around plugin code), unless the run's
// results were marked complete (process_end.hpp): then the line says so and
// the process ends with the run's own status. The same scopes name a plugin
// that calls exit() or quick_exit() while a PluginExitGuard is armed
// (plugin_exit_guard.hpp). Private to plugin_host; owned by the reliability work.
#pragma once

#include <string>

namespace trainhook::detail {

// The names a PluginCallScope shows, copied once into storage that lives
// until the process ends: the exit handler reads the last call's names after
// its PluginCallback may be gone. The file is also added to the list of
// plugin files the exit handler prints (the first 32 files).
struct PluginCallNames {
  const char* file;
  const char* callback;
};
PluginCallNames plugin_call_names(const std::string& file, const std::string& callback);

// A copy of `text` that lives until the process ends (never freed, not even
// at exit), for what signal and exit handlers read.
const char* lasting_copy(const std::string& text);

// What the handler prints for `sig` on the calling thread; `info` and
// `context` are the handler's (may be null). Prints nothing when neither a
// scope nor an address names a plugin and the results are not complete.
void crash_handler_report(int sig, const void* info, const void* context) noexcept;

// What the exit handler prints when a PluginExitGuard is armed, before it
// ends the process with kPluginExitStatus; returns when none is armed. `how`
// is "exit()" or "quick_exit()".
void plugin_exit_report(const char* how) noexcept;

// Installs the handlers once per process (later calls do nothing). The
// handler writes one line to stderr (crash_handler_report), then restores the
// previous handler (ASan's, or the default) and re-raises, so exit status and
// core dumps are unchanged; once the results are complete it ends the process
// with the run's status instead. Calls backtrace() once, so that the handler's
// own call does not load libgcc (which allocates).
void install_crash_handler() noexcept;

// The in-process plugin call that runs now or ran last on any thread (all
// null before the first), for a thread watching another (plugin teardown).
struct PluginCallNow {
  const char* file;
  const char* callback;
  const char* what;
};
PluginCallNow last_plugin_call() noexcept;

// The results-complete mark (process_end.hpp keeps the public face): the
// output folder and the status the process ends with; status -1: not marked.
void set_results_complete(const char* output_dir, int exit_status) noexcept;
int results_complete_status() noexcept;
const char* results_complete_dir() noexcept;
// Set once exit() runs the exit handlers (library destructors are next).
void set_process_exiting() noexcept;

// The status the process ends with once its run is over (process_end.hpp's
// bound_process_end): an exit() or quick_exit() called while the process
// ends (a library destructor's) ends it with this status instead, naming the
// plugin on the caller's stack (process_end_exit_report). -1: not set.
void set_process_end_status(int status) noexcept;

// Writes "trainhook: <how> was called while the process ended ..." naming the
// plugin library on the calling thread's stack, then _exit()s with the
// status of set_process_end_status. Returns when none was set or exit() has
// not begun. write(2) only.
void process_end_exit_report(const char* how) noexcept;

// Marks the calling thread as running plugin code for its lifetime, and
// records the call as the process's last plugin call (any thread). `file` and
// `callback` must live until the process ends (plugin_call_names), `what` too
// (event_name's or a literal): the signal and exit handlers read them.
// Whether a PluginCallScope is active on the calling thread (async-signal-safe:
// the fork watch of process_containment.cpp asks it in a forked child).
bool plugin_call_active() noexcept;

class PluginCallScope {
 public:
  PluginCallScope(const char* file, const char* callback, const char* what) noexcept;
  ~PluginCallScope();
  PluginCallScope(const PluginCallScope&) = delete;
  PluginCallScope& operator=(const PluginCallScope&) = delete;

 private:
  const char* file_;
  const char* callback_;
  const char* what_;
  PluginCallScope* outer_;
  friend void crash_handler_report(int, const void*, const void*) noexcept;
  friend void plugin_exit_report(const char*) noexcept;
};

}  // namespace trainhook::detail
