#include "plugin_address_table.hpp"

#include <link.h>

#include <atomic>
#include <mutex>
#include <set>

namespace trainhook::detail {
namespace {

// Plugins and what they brought in (a vendor SDK pulls in a dozen libraries).
constexpr int kMaxLibraries = 256;
constexpr int kMaxRanges = 8;  // PT_LOAD segments of one library (2 to 4 in practice)

struct Range {
  std::uintptr_t begin;
  std::uintptr_t end;
};

// Written once under g_write_mu before g_count makes it visible (release);
// only `name` changes later (set once, atomically).
struct Library {
  const char* file;     // the plugin's file (for a library it brought in too)
  const char* library;  // nullptr for the plugin's own library; else this library's file
  std::atomic<const char*> name{nullptr};
  int range_count;
  Range ranges[kMaxRanges];
};

Library g_libraries[kMaxLibraries];
std::atomic<int> g_count{0};
// The entries that are plugin libraries themselves, in load order.
int g_plugins[kMaxLibraries];
std::atomic<int> g_plugin_count{0};
std::mutex g_write_mu;  // trivially destructible in libstdc++: usable until exit

// The entries' strings: never freed (nor destroyed at exit), guarded by g_write_mu.
const char* kept_copy(const std::string& text) {
  static auto* kept = new std::set<std::string>;
  return kept->insert(text).first->c_str();
}

struct LoadedObject {
  const char* path;  // the loader's; valid while the object is loaded (always: RTLD_NODELETE)
  int range_count = 0;
  Range ranges[kMaxRanges];
};

LoadedObject object_of(const dl_phdr_info* info) {
  LoadedObject object;
  object.path = info->dlpi_name;
  for (int i = 0; i < info->dlpi_phnum && object.range_count < kMaxRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    object.ranges[object.range_count++] = {begin, begin + ph.p_memsz};
  }
  return object;
}

bool holds(const LoadedObject& object, std::uintptr_t address) {
  for (int i = 0; i < object.range_count; ++i)
    if (address >= object.ranges[i].begin && address < object.ranges[i].end) return true;
  return false;
}

// Runs `visit(index, object)` for each object the loader lists, in its order
// (load order: an object's new dependencies come after it).
template <class Visit>
void for_each_object(Visit visit) {
  struct Walk {
    Visit* visit;
    int index = 0;
  } walk{&visit};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* w = static_cast<Walk*>(data);
        (*w->visit)(w->index++, object_of(info));
        return 0;
      },
      &walk);
}

Library* library_holding(std::uintptr_t address) noexcept {
  const int count = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < count && i < kMaxLibraries; ++i) {
    Library& lib = g_libraries[i];
    for (int r = 0; r < lib.range_count; ++r)
      if (address >= lib.ranges[r].begin && address < lib.ranges[r].end) return &lib;
  }
  return nullptr;
}

// Under g_write_mu. `owner`: the plugin's entry, or nullptr for a plugin library.
Library* add(const LoadedObject& object, const char* file, const Library* owner) {
  const int n = g_count.load(std::memory_order_relaxed);
  if (n >= kMaxLibraries || object.range_count == 0) return nullptr;
  Library& lib = g_libraries[n];
  lib.file = file;
  lib.library = owner != nullptr ? kept_copy(object.path != nullptr ? object.path : "?") : nullptr;
  lib.name.store(owner != nullptr ? owner->name.load(std::memory_order_relaxed) : nullptr,
                 std::memory_order_relaxed);
  lib.range_count = object.range_count;
  for (int i = 0; i < object.range_count; ++i) lib.ranges[i] = object.ranges[i];
  if (owner == nullptr) {
    const int p = g_plugin_count.load(std::memory_order_relaxed);
    g_plugins[p] = n;
    g_plugin_count.store(p + 1, std::memory_order_release);
  }
  g_count.store(n + 1, std::memory_order_release);
  return &lib;
}

// Under g_write_mu: the objects from index `first` on that no entry holds yet
// become libraries of `owner` (the vDSO and nameless objects are skipped).
void enter_objects_from(int first, const Library& owner) {
  for_each_object([&](int index, const LoadedObject& object) {
    if (index < first || object.range_count == 0 || object.path == nullptr || object.path[0] == '\0') return;
    if (library_holding(object.ranges[0].begin) != nullptr) return;
    (void)add(object, owner.file, &owner);
  });
}

}  // namespace

bool enter_plugin_library(const void* address_in_library, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_write_mu);
  const auto address = reinterpret_cast<std::uintptr_t>(address_in_library);
  if (library_holding(address) != nullptr) return true;
  LoadedObject found;
  int found_index = -1;
  for_each_object([&](int index, const LoadedObject& object) {
    if (found_index < 0 && holds(object, address)) {
      found = object;
      found_index = index;
    }
  });
  if (found_index < 0) return false;
  const Library* lib = add(found, kept_copy(file), nullptr);
  if (lib == nullptr) return false;
  enter_objects_from(found_index + 1, *lib);  // what its dlopen loaded with it
  return true;
}

int loaded_object_count() {
  int count = 0;
  for_each_object([&](int, const LoadedObject&) { ++count; });
  return count;
}

void enter_libraries_loaded_since(int count, const void* address_in_plugin) {
  std::lock_guard<std::mutex> lock(g_write_mu);
  const Library* owner = library_holding(reinterpret_cast<std::uintptr_t>(address_in_plugin));
  if (owner == nullptr) return;
  if (owner->library != nullptr) return;  // a plugin's code is in its own library, never a dependency
  enter_objects_from(count, *owner);
}

void name_plugin_library(const void* address_in_library, const std::string& name) {
  std::lock_guard<std::mutex> lock(g_write_mu);
  Library* lib = library_holding(reinterpret_cast<std::uintptr_t>(address_in_library));
  if (lib == nullptr) return;
  const char* kept = kept_copy(name);
  const int count = g_count.load(std::memory_order_relaxed);
  for (int i = 0; i < count; ++i)
    if (g_libraries[i].file == lib->file) g_libraries[i].name.store(kept, std::memory_order_release);
}

PluginAddressEntry plugin_library_at(std::uintptr_t address) noexcept {
  const Library* lib = library_holding(address);
  if (lib == nullptr) return {};
  return {lib->file, lib->name.load(std::memory_order_acquire), lib->library};
}

std::string plugin_name_of_file(const std::string& file) {
  const int count = g_count.load(std::memory_order_acquire);
  for (int i = 0; i < count && i < kMaxLibraries; ++i) {
    if (file != g_libraries[i].file) continue;
    const char* name = g_libraries[i].name.load(std::memory_order_acquire);
    return name != nullptr ? name : "";
  }
  return "";
}

int plugin_library_count() noexcept { return g_plugin_count.load(std::memory_order_acquire); }

const char* plugin_library_file(int i) noexcept { return g_libraries[g_plugins[i]].file; }

}  // namespace trainhook::detail
