#include "plugin_address_table.hpp"

#include <link.h>

#include <atomic>
#include <mutex>
#include <set>

namespace trainhook::detail {
namespace {

constexpr int kMaxLibraries = 64;
constexpr int kMaxRanges = 8;  // PT_LOAD segments of one library (2 to 4 in practice)

struct Range {
  std::uintptr_t begin;
  std::uintptr_t end;
};

// Written once under g_write_mu before g_count makes it visible (release);
// only `name` changes later (set once, atomically).
struct Library {
  const char* file;
  std::atomic<const char*> name{nullptr};
  int range_count;
  Range ranges[kMaxRanges];
};

Library g_libraries[kMaxLibraries];
std::atomic<int> g_count{0};
std::mutex g_write_mu;  // trivially destructible in libstdc++: usable until exit

// The entries' strings: never freed (nor destroyed at exit), guarded by g_write_mu.
const char* kept_copy(const std::string& text) {
  static auto* kept = new std::set<std::string>;
  return kept->insert(text).first->c_str();
}

struct Search {
  std::uintptr_t address;
  int range_count = 0;
  Range ranges[kMaxRanges];
};

// dl_iterate_phdr's callback: the PT_LOAD segments of the object holding the address.
int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  int n = 0;
  Range ranges[kMaxRanges];
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t end = begin + ph.p_memsz;
    if (search->address >= begin && search->address < end) holds = true;
    if (n < kMaxRanges) ranges[n++] = {begin, end};
  }
  if (!holds) return 0;
  search->range_count = n;
  for (int i = 0; i < n; ++i) search->ranges[i] = ranges[i];
  return 1;  // found: stop
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

}  // namespace

bool enter_plugin_library(const void* address_in_library, const std::string& file) {
  std::lock_guard<std::mutex> lock(g_write_mu);
  const auto address = reinterpret_cast<std::uintptr_t>(address_in_library);
  if (library_holding(address) != nullptr) return true;
  Search search{};
  search.address = address;
  if (::dl_iterate_phdr(find_object, &search) == 0 || search.range_count == 0) return false;
  const int n = g_count.load(std::memory_order_relaxed);
  if (n >= kMaxLibraries) return false;
  Library& lib = g_libraries[n];
  lib.file = kept_copy(file);
  lib.name.store(nullptr, std::memory_order_relaxed);
  lib.range_count = search.range_count;
  for (int i = 0; i < search.range_count; ++i) lib.ranges[i] = search.ranges[i];
  g_count.store(n + 1, std::memory_order_release);
  return true;
}

void name_plugin_library(const void* address_in_library, const std::string& name) {
  std::lock_guard<std::mutex> lock(g_write_mu);
  if (Library* lib = library_holding(reinterpret_cast<std::uintptr_t>(address_in_library)))
    lib->name.store(kept_copy(name), std::memory_order_release);
}

PluginAddressEntry plugin_library_at(std::uintptr_t address) noexcept {
  const Library* lib = library_holding(address);
  if (lib == nullptr) return {};
  return {lib->file, lib->name.load(std::memory_order_acquire)};
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

int plugin_library_count() noexcept {
  const int n = g_count.load(std::memory_order_acquire);
  return n < kMaxLibraries ? n : kMaxLibraries;
}

const char* plugin_library_file(int i) noexcept { return g_libraries[i].file; }

}  // namespace trainhook::detail
