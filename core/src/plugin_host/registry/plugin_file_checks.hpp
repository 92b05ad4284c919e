// Checks run on a candidate plugin file before any of its code runs: path
// safety (as ssh and sudo do) and the ELF pre-check. Loading itself is
// Boost.DLL's (plugin_loader.cpp); these checks only read the file.
#pragma once

#include <filesystem>
#include <string>

namespace trainhook::detail {

// "" when `path` (file or folder, symlinks followed) is owned by the current
// user or root and not world-writable, and so is every folder above its real
// path (nor group-writable; a sticky folder such as /tmp is accepted when the
// folder below it is the user's or root's), as OpenSSH checks the path of
// authorized_keys; else the reason, naming the path at fault.
std::string unsafe_path_reason(const std::filesystem::path& path);
std::string unsafe_ancestor_reason(const std::filesystem::path& path);

// "" when `file` is an ELF shared object for this machine (class, byte order,
// machine and type ET_DYN) whose dynamic symbol table exports `entry_symbol`
// (defined, global or weak, default visibility: what dlsym can see); else the
// reason. The caller shows it next to the file's path.
std::string elf_problem(const std::filesystem::path& file, const std::string& entry_symbol);

}  // namespace trainhook::detail
