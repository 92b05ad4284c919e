// What the events group's run left behind once every instance was destroyed,
// against the process as it was before the library was loaded: threads, child
// processes (orphans of its children come back to the helper, a subreaper),
// signal dispositions, the standard descriptors, the working directory, and
// files in the fresh working folder the run started in (a plugin writes under
// th_host.output_dir, which is elsewhere). Signal dispositions, the standard
// descriptors and the working directory also fail on what the call watch saw
// in any one call (call_watch.hpp), even when the run put it back by its end.
#include "checks.hpp"

#include <chrono>
#include <thread>

namespace trainhook::plugin_check {
namespace {

std::string listed(const std::vector<std::string>& items, size_t at_most = 10) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < at_most; ++i) out += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > at_most) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

// The calls the watch saw change a setting of `kind`, one per line.
std::string calls(const CallWatch::Kind& kind) {
  if (kind.count == 0) return "";
  std::string out = "\n  in the calls (" + std::to_string(kind.count) + "):";
  for (const auto& s : kind.seen) out += "\n    " + s;
  if (kind.count > kind.seen.size())
    out += "\n    ... " + std::to_string(kind.count - kind.seen.size()) + " more";
  return out;
}

// `run_wide`: what the run left, "" for nothing; then what the calls did.
void report_setting(const char* check, const std::string& run_wide, const CallWatch::Kind& kind,
                    const std::string& pass, const std::string& why) {
  if (run_wide.empty() && kind.count == 0) {
    report(check, Verdict::pass, pass);
    return;
  }
  report(check, Verdict::fail,
         (run_wide.empty() ? "put back by the end of the run, but changed inside a plugin call" : run_wide) +
             " (" + why + ")" + calls(kind));
}

}  // namespace

void check_process_footprint(CheckContext& ctx) {
  ctx.watch.stop();  // its sampler is no thread of the plugin's
  // A worker that destroy() joined may still be on its way out of the kernel's
  // task list; one that outlives destroy() is still there after the grace.
  ProcessSnapshot now = ProcessSnapshot::take();
  const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while ((!new_threads(ctx.before, now).empty() || !new_children(ctx.before, now).empty()) &&
         std::chrono::steady_clock::now() < grace) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    now = ProcessSnapshot::take();
  }
  const auto threads = new_threads(ctx.before, now);
  report("threads_left", threads.empty() ? Verdict::pass : Verdict::fail,
         threads.empty() ? "no thread outlives destroy()"
                         : std::to_string(threads.size()) + " thread(s) still running 1 s after destroy(): " +
                               listed(threads) + " (join workers in destroy)");
  const auto children = new_children(ctx.before, now);
  report("child_processes", children.empty() ? Verdict::pass : Verdict::fail,
         children.empty() ? "no child process left"
                          : std::to_string(children.size()) + " process(es) it started are still there: " +
                                listed(children) + " (wait for them before destroy returns)");
  const auto signals = changed_signals(ctx.before, now);
  report_setting("signal_handlers",
                 signals.empty() ? "" : "changed the disposition of " + listed(signals, 32),
                 ctx.watch.signals(), "every signal disposition as before, around every call",
                 "the trainer owns its signal handlers: stop and save on SIGTERM, name crashes");
  const auto fds = changed_std_fds(ctx.before, now);
  report_setting("std_descriptors", listed(fds), ctx.watch.std_fds(),
                 "stdin, stdout and stderr as before, around every call",
                 "the trainer's output and its child processes use them");
  report_setting("working_directory",
                 now.cwd == ctx.before.cwd ? "" : "changed from " + ctx.before.cwd + " to " + now.cwd,
                 ctx.watch.cwd(), "unchanged, around every call",
                 "the trainer resolves relative paths once; use absolute ones");
  const auto files = files_under(ctx.cwd);
  report("files_in_cwd", files.empty() ? Verdict::pass : Verdict::fail,
         files.empty() ? "nothing written outside output_dir's tree"
                       : "wrote into the working directory instead of th_host.output_dir: " + listed(files));
}

}  // namespace trainhook::plugin_check
