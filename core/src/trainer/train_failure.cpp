// A run ending by an error: train() fires on_exception (ABI 1.3) once, with
// the failure's kind, message and global_step, then lets the error go on to
// its caller unchanged (the CLI prints it and exits as before). on_train_end
// does not follow. The callbacks get the bound on_train_end gets
// (--callback_end_timeout each), so one that hangs there cannot hold the exit;
// one that throws there is logged and never replaces the error.
#include "trainer_impl.hpp"

#include <trainhook/callbacks/bounded_fire.hpp>
#include <trainhook/plugin_host/host/end_request.hpp>
#include <trainhook/trainer/run_failure.hpp>
#include <trainhook/trainer/signal_guard.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace trainhook {

TrainOutput Trainer::Impl::train(std::optional<std::string> resume) {
  try {
    return run_training(std::move(resume));
  } catch (...) {
    fire_exception(std::current_exception());
    throw;
  }
}

void Trainer::Impl::fire_exception(const std::exception_ptr& error) noexcept {
  try {
    const RunFailure f = classify_failure(error);
    th_failure failure{TH_FAILURE_STRUCT_SIZE, f.kind, f.message.c_str(), state.global_step};
    EventPayload payload;
    payload.failure = &failure;
    if (args.callback_end_timeout <= 0) {
      handler.fire(TH_EVENT_EXCEPTION, state, control, payload);
      return;
    }
    const auto overrun =
        fire_bounded(handler, TH_EVENT_EXCEPTION, state, control, payload,
                     BoundedFireOptions()
                         .set_per_callback_seconds(args.callback_end_timeout)
                         .set_signal_received([] { return SignalGuard::received(); })
                         // As at on_train_end: the callbacks hear end_requested and keep what
                         // they have not delivered.
                         .set_on_signal([](int) { request_end_now(); }, kSecondSignalSeconds));
    if (!overrun || overrun->finished) return;
    // The callback still runs on the helper thread: nothing may be destroyed
    // (nor a plugin unloaded) under it, so the process ends here, with the
    // status the error would have given.
    const std::string who = overrun->callback.empty() ? "a callback" : "callback '" + overrun->callback + "'";
    const int sig = f.signal != 0 ? f.signal : overrun->signal;
    spdlog::error(
        "{} did not finish on_exception within {}; exiting without waiting for it; the run failed: {}", who,
        overrun->signal != 0 ? std::string("the grace after ") + SignalGuard::name(overrun->signal)
                             : "--callback_end_timeout",
        f.message);
    spdlog::default_logger()->flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(sig != 0 ? 128 + sig : 1);
  } catch (const std::exception& e) {
    spdlog::error("on_exception could not be delivered: {}", e.what());
  } catch (...) {
    spdlog::error("on_exception could not be delivered: unknown exception");
  }
}

}  // namespace trainhook
