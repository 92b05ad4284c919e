// How a plugin's background parts (uploaders, writers, sync queues) log. The
// plugin binds a Logger once to the host's logger (th_host.log is thread-safe
// on the host side, so worker threads may call it); tests bind a capture. An
// empty Logger drops messages. Every first-party plugin uses this one type.
#pragma once

#include <trainhook/plugin.hpp>

#include <functional>
#include <string>
#include <utility>

namespace trainhook::support {

using Logger = std::function<void(LogLevel, const std::string&)>;

// A Logger that forwards to the host, each message after `prefix` ("MLflow: ").
inline Logger host_logger(const Host& host, std::string prefix = {}) {
  return [host, prefix = std::move(prefix)](LogLevel level, const std::string& message) {
    host.log(level, prefix + message);
  };
}

inline void log_to(const Logger& log, LogLevel level, const std::string& message) {
  if (log) log(level, message);
}

}  // namespace trainhook::support
