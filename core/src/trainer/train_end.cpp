// The end of train(): the final model and
// the train results are saved before on_train_end (TrainerOptions::
// before_train_end), and on_train_end runs with a bound on each callback
// (--callback_end_timeout), so a plugin that hangs, runs over or calls exit()
// in its end-of-run work cannot take them with it. Owned by rel-core.
#include "trainer_impl.hpp"

#include <trainhook/callbacks/bounded_fire.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainhook {
namespace {

// How long callbacks get to end (spool) after a signal during on_train_end.
constexpr double kSignalGraceSeconds = 10;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

}  // namespace

void Trainer::Impl::end_training(const TrainOutput& output) {
  if (before_train_end) before_train_end(output);
  if (args.callback_end_timeout <= 0) {
    fire(TH_EVENT_TRAIN_END);
    return;
  }
  const EventPayload payload = access.payload(TH_EVENT_TRAIN_END, EventPayload{});
  const auto overrun = fire_bounded(
      handler, TH_EVENT_TRAIN_END, state, control, payload,
      BoundedFireOptions()
          .set_per_callback_seconds(args.callback_end_timeout)
          .set_signal_received([] { return SignalGuard::received(); })
          // The callbacks hear it through th_host.end_requested (ABI 1.2):
          // integrations stop waiting for their flush and spool what is left.
          .set_on_signal(
              [](int sig) {
                spdlog::warn(
                    "got {} during on_train_end: asking the callbacks to end now and keep what they "
                    "have not delivered (up to {} s)",
                    SignalGuard::name(sig), kSignalGraceSeconds);
                request_end_now();
              },
              kSignalGraceSeconds));
  if (!overrun) return;
  if (overrun->finished) return;  // every callback ended after the signal: the caller exits 128+signal
  // The callback still runs on the helper thread: nothing may be destroyed
  // (nor a plugin unloaded) under it, so the process ends here.
  const std::string who = overrun->callback.empty() ? "a callback" : "callback '" + overrun->callback + "'";
  const std::string saved = before_train_end ? "the final model and train results were saved in " +
                                                   args.output_dir + " before on_train_end"
                                             : "nothing is saved after training";
  int code = 1;
  std::string line;
  if (overrun->signal != 0) {
    code = 128 + overrun->signal;
    line = std::string("got ") + SignalGuard::name(overrun->signal) + " while " + who +
           " ran on_train_end (for " + seconds_text(overrun->seconds) + " s); " + saved +
           "; exiting without waiting for it";
  } else {
    line = who + " did not finish on_train_end within --callback_end_timeout " +
           seconds_text(args.callback_end_timeout) + " s; " + saved + "; exiting without waiting for it";
  }
  spdlog::error("{}", line);
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace trainhook
