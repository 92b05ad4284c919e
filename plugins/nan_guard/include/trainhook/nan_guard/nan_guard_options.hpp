// Options of the nan_guard callback, from its plugin_config section
// ({"action": "stop", "patience": 1}); the keys are declared once, in table().
#pragma once

#include <trainhook/options.hpp>

#include <cstdint>
#include <string>

namespace trainhook::nan_guard {

enum class Action { stop, skip };

class NanGuardOptions {
  // stop: end the run after `patience` consecutive bad steps; skip: do not
  // apply a bad step's optimizer update (as a gradient scaler does).
  TRAINHOOK_OPTION(Action, action, Action::stop);

 public:
  // >= 1 consecutive bad steps before `stop` ends the run.
  TRAINHOOK_OPTION(int64_t, patience, 1);

 public:
  static const OptionTable<NanGuardOptions>& table();
  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static NanGuardOptions from_json(const std::string& config_json) { return table().parse(config_json); }
};

}  // namespace trainhook::nan_guard
