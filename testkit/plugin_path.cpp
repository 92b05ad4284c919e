// testkit::plugin_path (plugin_driver.hpp, in tree only): where this build puts
// a plugin of ours, named as the registry names plugin files.
#include "plugin_driver.hpp"

#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <cstdlib>
#include <stdexcept>

namespace testkit {

std::string plugin_path(const std::string& name) {
  const char* build = std::getenv("TRAINHOOK_BUILD_DIR");
  if (build == nullptr)
    throw std::runtime_error("TRAINHOOK_BUILD_DIR is not set (run the test through ctest)");
  return std::string(build) + "/lib/trainhook/plugins/" + trainhook::plugin_file_name(name);
}

}  // namespace testkit
