// A crash inside plugin code (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) names
// the plugin file, the callback and the event being run before the process
// dies of the signal as before (issue 22; GStreamer's registry does the same
// around plugin code). Private to plugin_host; owned by the reliability work.
#pragma once

namespace trainhook::detail {

// What the handler prints for `sig` (nothing outside plugin code).
void crash_handler_report(int sig) noexcept;

// Installs the handlers once per process (later calls do nothing). The
// handler writes one line to stderr when a PluginCallScope is active on the
// crashing thread, then restores the previous handler (ASan's, or the
// default) and re-raises, so exit status and core dumps are unchanged.
void install_crash_handler() noexcept;

// Marks the calling thread as running plugin code for its lifetime. The
// strings must outlive the scope (they are read from the signal handler).
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
};

}  // namespace trainhook::detail
