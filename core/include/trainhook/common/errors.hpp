#pragma once
// Every exception type the core throws, in one place. Each message names the
// flag, key, file, plugin or rank at fault and says what was expected; the
// type says which layer found the problem, so the CLI can choose its exit code.
#include <stdexcept>

namespace trainhook {

// A user-facing argument problem (flag, config-file key, value), with the
// closest valid name for a typo.
class ArgumentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A value that does not fit its option; the option table's caller adds where
// it came from (flag or file and key) and rethrows it as an ArgumentError.
class ValueError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A plugin library or registry problem: the file, flag or callback at fault.
class PluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A callback failed under PluginErrorPolicy::fail; names the callback and the event.
class CallbackError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace distributed {
// A rendezvous or collective that did not complete: names the rank and the cause.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
}  // namespace distributed

}  // namespace trainhook
