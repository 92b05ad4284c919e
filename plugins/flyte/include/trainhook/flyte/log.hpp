// How the plugin's parts log: a function the callback binds to the host's
// logger (thread-safe on the host side), and tests bind to a capture.
#pragma once

#include <functional>
#include <string>

namespace trainhook::flyte {

enum class Level { debug, info, warn, error };
using Logger = std::function<void(Level, const std::string&)>;

}  // namespace trainhook::flyte
