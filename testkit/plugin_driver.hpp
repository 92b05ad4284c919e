// In tree: the installed fake host and plugin driver
// (trainhook/testkit/plugin_driver.hpp), plus where this build puts our plugins.
#pragma once

#include <trainhook/testkit/plugin_driver.hpp>

#include <string>

namespace testkit {

// <build>/lib/trainhook/plugins/<plugin_file_name(name)>; the build dir comes
// from TRAINHOOK_BUILD_DIR (set by CTest).
std::string plugin_path(const std::string& name);

}  // namespace testkit
