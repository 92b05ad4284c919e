// Loads one plugin library into THIS process: the ELF pre-check, dlopen
// (Boost.DLL), the entry point, ABI negotiation and the host-owned copies of
// what the entry returned (PluginLibrary). Runs the library's code, so the
// registry calls it only for libraries a run enabled; the scanner and the
// isolated-callback runner (both helper processes) call it for the rest.
#pragma once

#include "plugin_file.hpp"
#include "plugin_library.hpp"

#include <trainhook/plugin_host/registry/library_record.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace trainhook::detail {

// How a refusal starts when the file was not the version its caller judged
// (replaced or written to meanwhile): a verdict about no particular bytes,
// which the registry cache does not keep.
inline constexpr char kNotTheJudgedFile[] = "not the file that was checked: ";

// Loads the library open in `file`, the very file its caller judged: the ELF
// pre-check reads it and dlopen() loads it through file.proc_path(), so a
// file renamed over the path meanwhile is never loaded; one written to in
// place since it was opened is refused. nullptr with `refused_reason` set
// when the file is refused; `rec` receives what could be read (plugin name,
// ABI, callbacks, commands; loaded = true on success); rec.path is what
// messages show. What it needs beside it through $ORIGIN in its RUNPATH is
// loaded first (PluginFile::load_origin_dependencies): to the dynamic loader
// its own folder is /proc/self/fd.
std::shared_ptr<const PluginLibrary> load_plugin_library(PluginFile& file, LibraryRecord& rec);

// Opens `file` once and loads that descriptor as above. With `expected` (a
// helper process loading what its caller judged, e.g. the scanner), a file
// that is not that version is refused (kNotTheJudgedFile).
std::shared_ptr<const PluginLibrary> load_plugin_library(const std::filesystem::path& file,
                                                         LibraryRecord& rec,
                                                         const FileIdentity* expected = nullptr);

// For the plugin runner: loads the descriptor of `file` that the trainer
// passed to it (inherited, not close-on-exec: PluginRegistry::pass_library),
// found by the name the kernel gives it ("FILE", or "FILE (deleted)" once it
// was renamed over), so the runner loads the bytes the trainer judged. When
// none was passed (another host), `file` is opened here.
std::shared_ptr<const PluginLibrary> load_passed_plugin_library(const std::filesystem::path& file,
                                                                LibraryRecord& rec);

// The callback a loaded library exports under `name`, or nullptr.
const th_callback_info* find_callback(const PluginLibrary& library, const std::string& name);

}  // namespace trainhook::detail
