// A loaded plugin library, private to the registry. Shared by the registry and
// every callback instance created from it: dlclose is called when the last of
// them lets go, but the library was loaded with RTLD_NODELETE and stays mapped
// until the process ends (its destructors run in exit(); plugin_loader.cpp).
#pragma once

#include <trainhook/abi.h>

#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

namespace trainhook::detail {

struct PluginLibrary {
  std::filesystem::path path;
  boost::dll::shared_library library;
  // Host-owned copies of what the entry returned (see abi_copy): every struct is
  // zero-initialised, then receives only the bytes the plugin's struct_size
  // covers, so fields of a newer ABI minor read as 0 and the host never reads
  // past the end of the plugin's struct. Strings and functions still point into
  // `library`. `info` points at info_copy once the library is accepted.
  const th_plugin_info* info = nullptr;
  th_plugin_info info_copy{};
  std::vector<th_callback_info> callbacks;  // size fixed before pointers are taken
  std::vector<th_callback_vtable> vtables;  // one per callback
  std::vector<const th_callback_info*> callback_ptrs;
  std::vector<th_command_info> commands;
  std::vector<const th_command_info*> command_ptrs;
};

// Copies a struct the plugin filled into a zeroed one of the host's: reads
// min(plugin struct_size, host's known size) bytes; the copy's struct_size is
// that amount, so TH_HAS_FIELD on the copy answers for the plugin's struct.
template <class T>
T abi_copy(const T& in, uint32_t host_struct_size) {
  T out{};
  const uint32_t n = std::min(in.struct_size, host_struct_size);
  std::memcpy(&out, &in, n);
  out.struct_size = n;
  return out;
}

}  // namespace trainhook::detail
