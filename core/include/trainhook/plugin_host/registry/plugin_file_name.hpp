// The plugin file-name pattern, defined once: lib + trainhook_<name> + the
// platform's shared-library suffix as Boost.DLL names it (shared_library::suffix()).
// The registry scans folders for it; the tests, the testkit and
// the benchmarks build file names with it; cmake/TrainhookPlugin.cmake gives
// plugin targets the same prefix and suffix. Compiled into the small static
// library trainhook_plugin_file_name (core/CMakeLists.txt), so the testkit can
// use it without linking the core.
#pragma once

#include <string>

namespace trainhook {

inline constexpr char kPluginFilePrefix[] = "libtrainhook_";

// Boost.DLL's shared_library::suffix(): ".so" on Linux.
std::string plugin_file_suffix();

// "libtrainhook_<name><suffix>".
std::string plugin_file_name(const std::string& name);

// The <name> of a file name that matches the pattern; "" when it does not.
std::string plugin_name_of_file(const std::string& file_name);

// "libtrainhook_*<suffix>", for messages.
std::string plugin_file_glob();

}  // namespace trainhook
