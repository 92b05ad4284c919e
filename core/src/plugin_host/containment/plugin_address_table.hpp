// Which plugin library holds a code or data address, for the crash handler.
// Each plugin library loaded into this process is entered once, right after
// dlopen, with the address ranges of its loaded segments (dl_iterate_phdr),
// and so is every library its load brought in (its DT_NEEDED dependencies not
// loaded before, a vendor SDK's own libraries) and every library loaded while
// its callbacks were created (dlopen in create or on_train_begin): a crash on
// a worker thread of such a library names the plugin that brought it.
// Libraries are loaded with RTLD_NODELETE (plugin_loader.cpp) and so are never
// unmapped: an entry stays true until the process ends, and the table only
// grows. Readers take no lock and allocate nothing (async-signal-safe);
// writers are serialised. Private to plugin_host; owned by the reliability work.
#pragma once

#include <cstdint>
#include <string>

namespace trainhook::detail {

struct PluginAddressEntry {
  const char* file = nullptr;  // the plugin's file as messages show it (process lifetime); nullptr: no plugin
  const char* name = nullptr;  // the plugin's name; nullptr until its entry point answered
  // The library holding the address when the plugin brought it in (a
  // dependency, a library it dlopen'ed); nullptr: the plugin's own file.
  const char* library = nullptr;
};

// Enters the library whose loaded segments hold `address_in_library` (its
// entry symbol), shown as `file`, and every object loaded after it (the
// dependencies its dlopen loaded: the loader appends them to its list after
// the library itself). A library entered before is left as it is, its
// dependencies too. Returns false when no loaded object holds the address or
// the table is full (256 libraries): the crash handler then cannot name it by address.
bool enter_plugin_library(const void* address_in_library, const std::string& file);

// The number of objects loaded in the process now (dl_iterate_phdr), to be
// passed to enter_libraries_loaded_since after a plugin call.
int loaded_object_count();

// Enters the objects beyond the first `count` in the loader's list (those
// loaded since loaded_object_count() returned it) as libraries of the plugin
// whose library holds `address_in_plugin`. Does nothing when that library was
// never entered. Objects already entered (another plugin's) are left as they are.
void enter_libraries_loaded_since(int count, const void* address_in_plugin);

// Sets the plugin name of the library holding `address_in_library` (and of
// the libraries it brought in).
void name_plugin_library(const void* address_in_library, const std::string& name);

// The library holding `address` (file nullptr: none). Async-signal-safe.
PluginAddressEntry plugin_library_at(std::uintptr_t address) noexcept;

// The plugin name of the library shown as `file`, or "" (not for handlers).
std::string plugin_name_of_file(const std::string& file);

// The number of plugin libraries entered (not counting what they brought in),
// and the file of entry i < that number. Async-signal-safe.
int plugin_library_count() noexcept;
const char* plugin_library_file(int i) noexcept;

}  // namespace trainhook::detail
