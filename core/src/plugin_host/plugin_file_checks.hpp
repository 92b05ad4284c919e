// Checks run on a candidate plugin file before any of its code runs: path
// safety (as ssh and sudo do) and the presence of the entry symbol.
#pragma once

#include <filesystem>
#include <string>

namespace trainhook::detail {

// "" when `path` (file or folder, symlinks followed) is owned by the current
// user or root and not world-writable; else the reason, naming the path.
std::string unsafe_path_reason(const std::filesystem::path& path);

// "" when `file` is a shared library exporting `entry_symbol`; else the reason.
// Reads the file only (boost::dll::library_info; the dynamic symbol table
// directly for stripped libraries, which have no .symtab for library_info).
std::string entry_symbol_problem(const std::filesystem::path& file, const std::string& entry_symbol);

}  // namespace trainhook::detail
