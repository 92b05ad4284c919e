// A loaded plugin library, private to the registry. Shared by the registry and
// every callback instance created from it: the library is unloaded (dlclose)
// only when the last of them lets go.
#pragma once

#include <trainhook/abi.h>

#include <boost/dll/shared_library.hpp>

#include <filesystem>

namespace trainhook::detail {

struct PluginLibrary {
  std::filesystem::path path;
  boost::dll::shared_library library;
  const th_plugin_info* info = nullptr;  // static storage inside `library`
};

}  // namespace trainhook::detail
