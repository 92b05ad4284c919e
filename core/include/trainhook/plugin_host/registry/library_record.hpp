// What the registry (plugin_registry.hpp) knows of one library: its file, the
// scan's verdict, and the callbacks and commands it exports. The scan, the
// registry cache and the loader read and write these records; the registry
// holds them. No LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace trainhook {

struct CallbackDescriptor {
  std::string name;
  std::string version;
  int32_t kind = 0;  // TH_KIND_*
  std::string description;
  // Set when an earlier library won this name: it overrides this one (an
  // earlier folder) or allow_duplicate_plugins let it win (the same folder).
  std::filesystem::path shadowed_by;
  bool overridden = false;  // shadowed_by is in an earlier folder of the search path
  uint64_t event_mask = 0;  // TH_EVENT_BIT()s of the events it wants
};

// A CLI subcommand a library exports (th_command_info): `trainhook <name> ...`.
struct CommandDescriptor {
  std::string name;
  std::string description;
  std::filesystem::path shadowed_by;  // as for callbacks
  bool overridden = false;
};

struct LibraryRecord {
  std::filesystem::path path;
  size_t folder = 0;           // index of the folder it was found in, in searched_dirs()
  bool loaded = false;         // accepted by the scan (not: mapped into this process; that is on demand)
  std::string refused_reason;  // set when !loaded
  std::string plugin_name;
  std::string plugin_version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::vector<CallbackDescriptor> callbacks;
  std::vector<CommandDescriptor> commands;
};

}  // namespace trainhook
