// Loads one plugin library into THIS process: the ELF pre-check, dlopen
// (Boost.DLL), the entry point, ABI negotiation and the host-owned copies of
// what the entry returned (PluginLibrary). Runs the library's code, so the
// registry calls it only for libraries a run enabled; the scanner and the
// isolated-callback runner (both helper processes) call it for the rest.
#pragma once

#include "plugin_library.hpp"

#include <trainhook/plugin_host/registry/library_record.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace trainhook::detail {

// nullptr with `refused_reason` set when the file is refused; `rec` receives
// what could be read (plugin name, ABI, callbacks, commands; loaded = true on
// success). `file` is what is opened, rec.path what messages show.
std::shared_ptr<const PluginLibrary> load_plugin_library(const std::filesystem::path& file,
                                                         LibraryRecord& rec);

// The callback a loaded library exports under `name`, or nullptr.
const th_callback_info* find_callback(const PluginLibrary& library, const std::string& name);

}  // namespace trainhook::detail
