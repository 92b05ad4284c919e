// Where the core's helper programs live: the plugin scanner and the runner of
// isolated callbacks, installed with the core library (as GStreamer installs
// gst-plugin-scanner in libexec) so a program that embeds the core finds them
// without the CLI.
#pragma once

#include <filesystem>
#include <string>

namespace trainhook::detail {

// The path of helper `name` (e.g. "trainhook-plugin-scanner"), looked up in:
// $TRAINHOOK_LIBEXEC_DIR, <folder of libtrainhook_base>/../libexec/trainhook
// (an installed prefix and the build tree alike), then the build tree this
// library was compiled in. Throws PluginError naming every place tried.
std::filesystem::path helper_executable(const std::string& name);

}  // namespace trainhook::detail
