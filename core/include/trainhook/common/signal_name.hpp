// A signal's name for messages ("SIGSEGV"), shared by everything that reports
// how a process ended: the plugin scanner, the plugin check and its helper,
// the isolated-plugin host. Inline: the helpers link no library of ours.
#pragma once

#include <string.h>

#include <string>

namespace trainhook {

// "SIGSEGV", or "signal 42" for a number without a name.
inline std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

}  // namespace trainhook
