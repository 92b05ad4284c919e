// LibraryRecord <-> JSON: what the scanner process reports for one library and
// what the registry cache keeps. The scanner writes it; the registry reads it
// back, so a field added here is added to both sides at once.
#pragma once

#include <trainhook/plugin_host/registry/library_record.hpp>

#include <nlohmann/json.hpp>

namespace trainhook::detail {

// The scan result only: path, folder and shadowing are the registry's.
nlohmann::json record_to_json(const LibraryRecord& rec);
// Throws std::runtime_error naming the first key that is missing or of the wrong type.
void record_from_json(const nlohmann::json& j, LibraryRecord& rec);

}  // namespace trainhook::detail
