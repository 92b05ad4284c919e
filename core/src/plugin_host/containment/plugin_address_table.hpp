// Which plugin library holds a code or data address, for the crash handler.
// Each plugin library loaded into this process is entered once, right after
// dlopen, with the address ranges of its loaded segments (dl_iterate_phdr).
// Libraries are loaded with RTLD_NODELETE (plugin_loader.cpp) and so are never
// unmapped: an entry stays true until the process ends, and the table only
// grows. Readers take no lock and allocate nothing (async-signal-safe);
// writers are serialised. Private to plugin_host; owned by the reliability work.
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::detail {

struct PluginAddressEntry {
  const char* file = nullptr;  // as messages show it (process lifetime); nullptr: no plugin
  const char* name = nullptr;  // the plugin's name; nullptr until its entry point answered
};

// Enters the library whose loaded segments hold `address_in_library` (its
// entry symbol), shown as `file`. A library entered before is left as it is.
// Returns false when no loaded object holds the address or the table is full
// (64 libraries): the crash handler then cannot name it by address.
bool enter_plugin_library(const void* address_in_library, const std::string& file);

// Sets the plugin name of the library holding `address_in_library`.
void name_plugin_library(const void* address_in_library, const std::string& name);

// The library holding `address` (file nullptr: none). Async-signal-safe.
PluginAddressEntry plugin_library_at(std::uintptr_t address) noexcept;

// The plugin name of the library shown as `file`, or "" (not for handlers).
std::string plugin_name_of_file(const std::string& file);

// The number of libraries entered, and the file of entry i < that number.
// Async-signal-safe.
int plugin_library_count() noexcept;
const char* plugin_library_file(int i) noexcept;

}  // namespace trainhook::detail
