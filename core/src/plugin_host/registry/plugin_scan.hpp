// Reads one plugin library's metadata in a helper process
// (trainhook-plugin-scanner): the library's constructors and entry point run
// there, so one that crashes, hangs or exits is recorded as refused with the
// reason, and the caller goes on. The scanner runs in a process group of its
// own, and the whole group is killed when the scan ends, so nothing a
// library's constructor started outlives its scan. The scan ends when the
// scanner exits (or at the limit), not when its pipes close: a daemon that
// keeps them open does not turn an answer into a timeout.
#pragma once

#include "plugin_file.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/registry/library_record.hpp>

#include <chrono>
#include <filesystem>

namespace trainhook::detail {

// The time limit for one library: TRAINHOOK_PLUGIN_SCAN_TIMEOUT seconds, default 10.
std::chrono::milliseconds scan_time_limit();

// Fills rec (loaded, or refused_reason) for `file`, the version of it that
// `judged` identifies (the scanner refuses another: kNotTheJudgedFile); never
// throws for what the library does. Returns true when the library did not
// answer within `limit` (rec is then refused saying so; a higher limit may
// judge it otherwise). Throws PluginError when the scanner itself cannot be
// started.
[[nodiscard]] bool scan_in_helper(const std::filesystem::path& scanner, const std::filesystem::path& file,
                                  const FileIdentity& judged, std::chrono::milliseconds limit,
                                  LibraryRecord& rec);

}  // namespace trainhook::detail
