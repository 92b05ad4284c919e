// Options of the nan_guard callback, from its plugin_config section
// ({"action": "stop", "patience": 1}) or chained setters.
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::nan_guard {

enum class Action { stop, skip };

class NanGuardOptions {
 public:
  // stop: end the run after `patience` consecutive bad steps; skip: do not
  // apply a bad step's optimizer update (as a gradient scaler does).
  NanGuardOptions& action(Action a) {
    action_ = a;
    return *this;
  }
  NanGuardOptions& patience(int64_t p);  // >= 1
  Action action() const noexcept { return action_; }
  int64_t patience() const noexcept { return patience_; }

  // Throws trainhook::ConfigError naming the key for an unknown key or bad value.
  static NanGuardOptions from_json(const std::string& config_json);

 private:
  Action action_ = Action::stop;
  int64_t patience_ = 1;
};

}  // namespace trainhook::nan_guard
