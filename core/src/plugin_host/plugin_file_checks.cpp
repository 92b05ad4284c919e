#include "plugin_file_checks.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
// boost/dll/library_info.hpp uses std::vector without including it (Boost 1.74).
#include <boost/dll/library_info.hpp>

#include <elf.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trainhook::detail {
namespace fs = std::filesystem;

namespace {

std::string user_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid))
    return std::string(pw->pw_name) + " (uid " + std::to_string(uid) + ")";
  return "uid " + std::to_string(uid);
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Reads a POD from the file at `offset`; false when the file is too short.
template <class T>
bool read_at(std::ifstream& in, uint64_t offset, T& out) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(&out), sizeof out);
  return static_cast<bool>(in);
}

// Looks for a defined, global/weak, default-visibility symbol in .dynsym (what
// dlsym can see). ELF64 little-endian only, which covers every platform the
// trainer builds on. Returns false on any malformed input.
bool dynsym_exports(const fs::path& file, const std::string& name) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!read_at(in, 0, eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return false;
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return false;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!read_at(in, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), sh)) return false;
    if (sh.sh_type != SHT_DYNSYM || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
    Elf64_Shdr strtab{};
    if (sh.sh_link >= eh.e_shnum ||
        !read_at(in, eh.e_shoff + uint64_t{sh.sh_link} * sizeof(Elf64_Shdr), strtab))
      return false;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      if (!read_at(in, sh.sh_offset + k * sizeof(Elf64_Sym), sym)) return false;
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT || sym.st_name >= strtab.sh_size)
        continue;
      std::string candidate(name.size() + 1, '\0');
      in.seekg(static_cast<std::streamoff>(strtab.sh_offset + sym.st_name));
      in.read(candidate.data(), static_cast<std::streamsize>(candidate.size()));
      if (in && candidate.compare(0, name.size(), name) == 0 && candidate[name.size()] == '\0') return true;
      in.clear();
    }
  }
  return false;
}

}  // namespace

std::string unsafe_path_reason(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path.string() + " cannot be inspected (stat failed)";
  const bool is_dir = S_ISDIR(st.st_mode);
  const std::string what = (is_dir ? "folder " : "file ") + path.string();
  if ((st.st_mode & S_IWOTH) != 0)
    return what + " is world-writable (mode " + octal_mode(st.st_mode) +
           "); anyone could replace the plugin code";
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return what + " is owned by " + user_name(st.st_uid) + ", not by you (" + user_name(me) + ") or root";
  return {};
}

std::string entry_symbol_problem(const fs::path& file, const std::string& entry_symbol) {
  std::vector<std::string> sections;
  std::vector<std::string> symbols;
  try {
    boost::dll::library_info info(file, true);
    sections = info.sections();
    symbols = info.symbols();
  } catch (const std::exception& e) {
    return std::string("not a shared library (cannot read it as ELF: ") + e.what() + ")";
  }
  if (std::find(symbols.begin(), symbols.end(), entry_symbol) != symbols.end()) return {};
  // library_info reads .symtab only; a stripped library keeps its exports in .dynsym.
  if (dynsym_exports(file, entry_symbol)) return {};
  if (std::find(sections.begin(), sections.end(), ".dynsym") == sections.end())
    return "not a shared library (no dynamic symbol table)";
  std::string other;
  for (const auto& s : symbols)
    if (s.rfind("trainhook_plugin_v", 0) == 0) other += (other.empty() ? "" : ", ") + s;
  return "no entry symbol " + entry_symbol + " (not a Trainhook plugin, or built for another ABI" +
         (other.empty() ? std::string() : "; it exports " + other) + ")";
}

}  // namespace trainhook::detail
