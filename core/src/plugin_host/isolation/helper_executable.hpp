// Where the core's helper programs live: the plugin scanner and the runner of
// isolated callbacks, installed with the core library (as GStreamer installs
// gst-plugin-scanner in libexec) so a program that embeds the core finds them
// without the CLI.
#pragma once

#include <filesystem>
#include <string>

namespace trainhook::detail {

// The path of helper `name` (e.g. "trainhook-plugin-scanner"), looked up in:
// $TRAINHOOK_LIBEXEC_DIR, <prefix>/libexec/trainhook seen from the folder of
// libtrainhook_base (an installed prefix, wherever it was moved), then the
// build tree this library was compiled in. Throws PluginError naming every place tried.
std::filesystem::path helper_executable(const std::string& name);

}  // namespace trainhook::detail
