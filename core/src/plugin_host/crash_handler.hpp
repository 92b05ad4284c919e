// A crash inside plugin code (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) names
// the plugin file, the callback and the event being run before the process
// dies of the signal as before (GStreamer's registry does the same
// around plugin code). The same scopes name a plugin that calls exit() or
// quick_exit() while a PluginExitGuard is armed (plugin_exit_guard.hpp).
// Private to plugin_host; owned by the reliability work.
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

// What the handler prints for `sig` (nothing outside plugin code).
void crash_handler_report(int sig) noexcept;

// What the exit handler prints when a PluginExitGuard is armed, before it
// ends the process with kPluginExitStatus; returns when none is armed. `how`
// is "exit()" or "quick_exit()".
void plugin_exit_report(const char* how) noexcept;

// Installs the handlers once per process (later calls do nothing). The
// handler writes one line to stderr when a PluginCallScope is active on the
// crashing thread, then restores the previous handler (ASan's, or the
// default) and re-raises, so exit status and core dumps are unchanged.
void install_crash_handler() noexcept;

// Marks the calling thread as running plugin code for its lifetime, and
// records the call as the process's last plugin call (any thread). `file` and
// `callback` must live until the process ends (plugin_call_names), `what` too
// (event_name's or a literal): the signal and exit handlers read them.
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
  friend void crash_handler_report(int) noexcept;
  friend void plugin_exit_report(const char*) noexcept;
};

}  // namespace trainhook::detail
