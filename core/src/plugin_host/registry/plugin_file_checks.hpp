// Checks run on a file that decides what runs before it is used: path
// safety (as ssh and sudo do), for plugin libraries, the site file and plugin
// lock files alike, and the ELF pre-check of a plugin library and what it
// needs beside it. Loading itself is Boost.DLL's (plugin_loader.cpp); these
// checks only read the file.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::detail {

// "" when `path` (file or folder, symlinks followed) is owned by the current
// user or root and writable by nobody else (neither group- nor
// world-writable), and so is every folder above its real path (a sticky
// folder such as /tmp is accepted when the folder below it is the user's or
// root's), as OpenSSH's StrictModes checks authorized_keys; else the reason,
// naming the path at fault, the bit, and the command that fixes it
// ("chmod g-w FILE").
std::string unsafe_path_reason(const std::filesystem::path& path);
// The same rule for `st`, what fstat() said of the descriptor opened from
// `path` (so the file judged is the file used); folders above are not looked at.
std::string unsafe_mode_reason(const std::filesystem::path& path, const struct stat& st);
// The folders above `path`'s real path only.
std::string unsafe_ancestor_reason(const std::filesystem::path& path);

// "" when `file` is an ELF shared object for this machine (class, byte order,
// machine and type ET_DYN) whose dynamic symbol table exports `entry_symbol`
// (defined, global or weak, default visibility: what dlsym can see); else the
// reason. The caller shows it next to the file's path.
std::string elf_problem(const std::filesystem::path& file, const std::string& entry_symbol);

// The libraries `file` (an ELF shared object, read here) names in DT_NEEDED
// that its RUNPATH (or RPATH) finds in a folder named through $ORIGIN or
// ${ORIGIN}, with $ORIGIN the real folder of `library` (where the file lives
// under its own name; `file` may be a /proc/self/fd/N of it), in DT_NEEDED
// order. Loaded through /proc/self/fd/N, a library's $ORIGIN is /proc/self/fd
// to the dynamic loader: these are what it would not find (PluginFile::
// load_origin_dependencies). Empty for a file that is no such ELF file.
std::vector<std::filesystem::path> origin_dependencies(const std::filesystem::path& file,
                                                       const std::filesystem::path& library);
// "" when each of those passes unsafe_path_reason (and so does the folder the
// search path names for it); else the reason, naming the dependency.
std::string unsafe_dependency_reason(const std::filesystem::path& file, const std::filesystem::path& library);

}  // namespace trainhook::detail
