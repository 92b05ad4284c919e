#include <trainhook/nan_guard/nan_guard_options.hpp>

namespace trainhook::nan_guard {

const OptionTable<NanGuardOptions>& NanGuardOptions::table() {
  static const auto t =
      OptionTable<NanGuardOptions>("nan_guard")
          .choice(TRAINHOOK_KEY(action), {{"stop", Action::stop}, {"skip", Action::skip}},
                  "`stop`: end the run after `patience` consecutive bad steps, naming the parameter and the "
                  "step. `skip`: do not apply a bad step's optimizer update (the step still counts; the "
                  "scheduler advances); adds `nan_guard_skipped_steps` to the logs.")
          .key(TRAINHOOK_KEY(patience), "consecutive bad steps before `stop` ends the run")
          .min(1);
  return t;
}

}  // namespace trainhook::nan_guard
