#include <trainhook/plugin_host/containment/process_end.hpp>

#include "crash_handler.hpp"
#include "plugin_address_table.hpp"

#include <trainhook/common/signal_safe_write.hpp>

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace trainhook {
namespace {

// What the watchdog needs, set before its thread starts and never freed:
// it may fire while exit() destroys everything else.
struct ProcessEndBound {
  struct timespec deadline;  // CLOCK_MONOTONIC
  const char* message;
  int exit_status;
};
ProcessEndBound g_bound;  // trivially destructible: valid while exit() runs

void* watch_process_end(void* arg) {
  const auto* bound = static_cast<const ProcessEndBound*>(arg);
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &bound->deadline, nullptr) == EINTR) {
  }
  write_stderr_signal_safe(bound->message);
  ::_exit(bound->exit_status);
}

// exit() called again while exit() runs (a plugin library's destructor, run
// by the loader after the exit handlers, calling exit(3)) starts over with
// the calling thread's thread_local destructors, then ends with the status
// it was given. This one is created when exit() begins, after that
// thread's destructors already ran, so only such a nested exit() runs it: it
// names the caller and ends the process with the run's status.
struct NestedExitGuard {
  NestedExitGuard() = default;
  NestedExitGuard(const NestedExitGuard&) = delete;
  NestedExitGuard& operator=(const NestedExitGuard&) = delete;
  ~NestedExitGuard() { detail::process_end_exit_report("exit()"); }
};

void on_exit_begins() {
  detail::set_process_exiting();
  static thread_local NestedExitGuard nested_exit;  // registered now: see above
  (void)&nested_exit;
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

void mark_run_results_complete(const std::string& output_dir, int exit_status) {
  detail::install_crash_handler();  // a run without in-process plugins has none yet
  detail::set_results_complete(detail::lasting_copy(output_dir), exit_status);
}

bool run_results_complete() noexcept { return detail::results_complete_status() >= 0; }

PluginCallSite last_plugin_call() {
  const detail::PluginCallNow now = detail::last_plugin_call();
  PluginCallSite site;
  if (now.file != nullptr) {
    site.file = now.file;
    site.plugin = detail::plugin_name_of_file(site.file);
  }
  if (now.callback != nullptr) site.callback = now.callback;
  if (now.what != nullptr) site.what = now.what;
  return site;
}

std::string loaded_plugin_files() {
  std::string files;
  for (int i = 0; i < detail::plugin_library_count(); ++i) {
    if (!files.empty()) files += ", ";
    files += detail::plugin_library_file(i);
  }
  return files;
}

void bound_process_end(double seconds, const std::string& flag, int exit_status) {
  // Call once. Registered last, so it runs first in exit(): before static destructors
  // and the libraries' destructors (_dl_fini), which a crash line then names.
  detail::set_process_end_status(exit_status);
  std::atexit(on_exit_begins);
  if (seconds <= 0) return;
  const std::string files = loaded_plugin_files();
  std::string message = "trainhook: the process did not end within " + flag + " " + seconds_text(seconds) +
                        " s after its callbacks were destroyed (what still ran is exit-time code: the " +
                        "destructors of the plugin libraries loaded, " +
                        (files.empty() ? std::string("none") : files) + ", or of the trainer itself); ";
  if (detail::results_complete_status() >= 0)
    message += "the run's results are complete: everything it writes is in " +
               std::string(detail::results_complete_dir()) + "; ";
  message += "exiting with the run's status " + std::to_string(exit_status) + " without waiting for it\n";

  ProcessEndBound* bound = &g_bound;
  ::clock_gettime(CLOCK_MONOTONIC, &bound->deadline);
  const auto whole = static_cast<time_t>(seconds);
  bound->deadline.tv_sec += whole;
  bound->deadline.tv_nsec += static_cast<long>((seconds - static_cast<double>(whole)) * 1e9);
  if (bound->deadline.tv_nsec >= 1000000000L) {
    bound->deadline.tv_sec += 1;
    bound->deadline.tv_nsec -= 1000000000L;
  }
  bound->message = detail::lasting_copy(message);
  bound->exit_status = exit_status;
  pthread_t thread;
  if (::pthread_create(&thread, nullptr, watch_process_end, bound) == 0) ::pthread_detach(thread);
}

}  // namespace trainhook
