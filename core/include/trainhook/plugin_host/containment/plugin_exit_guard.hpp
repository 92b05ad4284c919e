// "No silent end": while a guard is alive, a call to exit() or quick_exit()
// from plugin code (a callback inside an event, or a plugin's own thread) no
// longer ends the process with the plugin's status (often 0, which a
// scheduler reads as success). The exit handler names the callback and event
// (or, off the callback path, the last callback call and the plugin files
// loaded) on stderr and ends the process with kPluginExitStatus.
//
// Who arms it: the Trainer around train(), evaluate() and predict() (so
// embedders get it), and `trainhook train` from before the plugins are
// created until it returns from its command. The trainer's own ends never go
// through it: its early ends use _exit/_Exit (no exit handlers run), and the
// CLI returns from main only after its guard is gone. Owned by plugin_host.
#pragma once

namespace trainhook {

// EX_SOFTWARE from <sysexits.h>: "an internal software error", distinct from
// the CLI's 1 (a reported error), 2 (arguments) and 128 + signal.
inline constexpr int kPluginExitStatus = 70;

// Arms the exit handlers for its lifetime; guards nest (a count), so the CLI's
// guard and the Trainer's may overlap. The handlers are registered with
// atexit/at_quick_exit once, on the first guard of the process.
class PluginExitGuard {
 public:
  PluginExitGuard() noexcept;
  ~PluginExitGuard();
  PluginExitGuard(const PluginExitGuard&) = delete;
  PluginExitGuard& operator=(const PluginExitGuard&) = delete;
};

}  // namespace trainhook
