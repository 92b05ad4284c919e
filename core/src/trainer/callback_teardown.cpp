// The end of the callbacks: each plugin's destroy() (an integration joins its
// worker there) and the release of the plugin libraries, run on a helper
// thread while the calling thread waits at most --callback_end_timeout per
// callback, as on_train_end does (train_end.cpp). A destroy() that blocks (a
// worker stuck on a dead server) is named and the process ends with the run's
// status without waiting for it; the kernel releases the output_dir lock with
// the process. Libraries are loaded with RTLD_NODELETE, so releasing them runs
// none of their code: their destructors run in exit() (process_end.hpp bounds
// that too). Owned by the reliability work.
#include "trainer_impl.hpp"

#include <trainhook/plugin_host/containment/process_end.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

namespace trainhook {
namespace {

// Shared with the helper thread, which may outlive the wait (an overrun).
struct TeardownProgress {
  std::mutex mu;
  std::condition_variable cv;
  size_t running = 0;  // index of the callback being destroyed; the count: the libraries
  uint64_t steps = 0;  // grows at each callback, so each gets the whole bound
  bool done = false;
};

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// "plugin 'x' (file)" for the callback being destroyed when the plugin host
// recorded the call (an in-process plugin), else "callback 'x'".
std::string who_is_destroying(const std::string& callback) {
  const PluginCallSite site = last_plugin_call();
  if (site.callback == callback && site.what == "destroy" && !site.file.empty())
    return "plugin '" + (site.plugin.empty() ? callback : site.plugin) + "' (" + site.file + ")";
  return "callback '" + callback + "'";
}

}  // namespace

void Trainer::Impl::end_callbacks(int exit_status) {
  // Last added first, as the handler's destructor does.
  std::vector<std::unique_ptr<detail::InternalCallback>> callbacks = handler.take_all();
  if (args.callback_end_timeout <= 0) {
    while (!callbacks.empty()) callbacks.pop_back();
    registry.reset();
    return;
  }
  std::vector<std::string> names;
  for (const auto& cb : callbacks) names.push_back(cb->name());
  auto progress = std::make_shared<TeardownProgress>();
  // The helper uses `callbacks` and `registry`: on an overrun this thread
  // never returns (std::_Exit below), so both outlive it.
  std::thread helper([this, &callbacks, progress] {
    for (size_t i = callbacks.size(); i-- > 0;) {
      {
        std::lock_guard<std::mutex> lock(progress->mu);
        progress->running = i;
        ++progress->steps;
      }
      callbacks[i].reset();
    }
    {
      std::lock_guard<std::mutex> lock(progress->mu);
      progress->running = callbacks.size();
      ++progress->steps;
    }
    registry.reset();
    std::lock_guard<std::mutex> lock(progress->mu);
    progress->done = true;
    progress->cv.notify_all();
  });

  using Clock = std::chrono::steady_clock;
  const auto bound =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(args.callback_end_timeout));
  const int signal_before = SignalGuard::received();
  uint64_t steps_seen = 0;
  Clock::time_point step_start = Clock::now();
  int signal = 0;
  std::unique_lock<std::mutex> lock(progress->mu);
  while (!progress->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return progress->done; })) {
    const Clock::time_point now = Clock::now();
    if (progress->steps != steps_seen) {
      steps_seen = progress->steps;
      step_start = now;
    }
    if (const int sig = SignalGuard::received(); sig != 0 && signal_before == 0) signal = sig;
    if (signal == 0 && now - step_start < bound) continue;
    // Still inside the plugin: nothing it may use is destroyed; the process ends here.
    const size_t running = progress->running;
    lock.unlock();
    helper.detach();
    const bool a_callback = running < names.size();
    const std::string who = a_callback ? who_is_destroying(names[running]) : "the plugin libraries";
    const std::string doing = a_callback ? "destroy" : "unloading";
    // The callback's own name when the plugin's is shown (a pack exports several).
    const std::string which =
        a_callback && who.rfind("plugin ", 0) == 0 ? " (callback '" + names[running] + "')" : std::string();
    const bool complete = run_results_complete();
    const int code = signal != 0 && !complete ? 128 + signal : exit_status;
    const std::string results =
        complete ? "the run's results are complete: everything it writes is in " + args.output_dir
                 : "the run had ended with status " + std::to_string(exit_status) +
                       " before its callbacks were destroyed";
    const std::string line =
        (signal != 0
             ? std::string("got ") + SignalGuard::name(signal) + " while " + who + " ran " + doing + which
             : who + " did not finish " + doing + " within --callback_end_timeout " +
                   seconds_text(args.callback_end_timeout) + " s" + which) +
        "; " + results + "; exiting with status " + std::to_string(code) + " without waiting for it";
    spdlog::error("{}", line);
    spdlog::default_logger()->flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  lock.unlock();
  helper.join();
}

void Trainer::end_callbacks(int exit_status) { impl_->end_callbacks(exit_status); }

}  // namespace trainhook
