#include "plugin_file_checks.hpp"
#include <trainhook/strings.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

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

// As chown takes it.
std::string login_name(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The ELF identity of the machine this trainhook runs on; a plugin must match
// it. The reader below handles ELF64 little-endian only.
#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
constexpr uint16_t kHostMachine = EM_PPC64;
#elif defined(__riscv) && __riscv_xlen == 64
constexpr uint16_t kHostMachine = EM_RISCV;
#else
#error "plugin_file_checks.cpp: add this platform's ELF machine (EM_*) and check it is ELF64 little-endian"
#endif

std::string machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_386:
      return "i386";
    case EM_AARCH64:
      return "AArch64";
    case EM_ARM:
      return "32-bit ARM";
    case EM_PPC64:
      return "PowerPC 64";
    case EM_RISCV:
      return "RISC-V";
    case EM_S390:
      return "s390";
    default:
      return "ELF machine " + std::to_string(machine);
  }
}

// Reads a POD from the file at `offset`; false when the file is too short.
template <class T>
bool read_at(std::ifstream& in, uint64_t offset, T& out) {
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(reinterpret_cast<char*>(&out), sizeof out);
  return static_cast<bool>(in);
}

// The NUL-terminated string at `offset`, at most `max` bytes of it.
std::string read_string(std::ifstream& in, uint64_t offset, size_t max) {
  std::string s(max + 1, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(s.data(), static_cast<std::streamsize>(max));
  in.clear();  // a string near the end of the file reads short; what was read is kept
  s.resize(std::strlen(s.c_str()));
  return s;
}

// What the .dynsym sections say about `name`.
struct DynamicSymbols {
  bool malformed = false;               // a section header or symbol lies outside the file
  bool has_dynsym = false;              // a dynamic symbol table exists at all
  bool exports_name = false;            // `name` is defined, global/weak, default visibility
  std::vector<std::string> entry_like;  // other exported trainhook_plugin_v* names
};

DynamicSymbols read_dynamic_symbols(std::ifstream& in, const Elf64_Ehdr& eh, const std::string& name) {
  DynamicSymbols out;
  const std::string entry_prefix = "trainhook_plugin_v";
  if (eh.e_shnum > 0 && eh.e_shentsize != sizeof(Elf64_Shdr)) {
    out.malformed = true;
    return out;
  }
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{};
    if (!read_at(in, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), sh)) {
      out.malformed = true;
      return out;
    }
    if (sh.sh_type != SHT_DYNSYM) continue;
    out.has_dynsym = true;
    Elf64_Shdr strtab{};
    if (sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_link >= eh.e_shnum ||
        !read_at(in, eh.e_shoff + uint64_t{sh.sh_link} * sizeof(Elf64_Shdr), strtab)) {
      out.malformed = true;
      return out;
    }
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      Elf64_Sym sym{};
      if (!read_at(in, sh.sh_offset + k * sizeof(Elf64_Sym), sym)) {
        out.malformed = true;
        return out;
      }
      const unsigned bind = ELF64_ST_BIND(sym.st_info);
      if (sym.st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
          ELF64_ST_VISIBILITY(sym.st_other) != STV_DEFAULT || sym.st_name >= strtab.sh_size)
        continue;
      // Read at most one past the longest name we compare.
      const std::string candidate =
          read_string(in, strtab.sh_offset + sym.st_name, std::max(name.size(), entry_prefix.size() + 8) + 1);
      if (candidate == name)
        out.exports_name = true;
      else if (strings::starts_with(candidate, entry_prefix))
        out.entry_like.push_back(candidate);
    }
  }
  return out;
}

// The libraries the .dynamic section names (DT_NEEDED, in order) and where
// the dynamic loader looks for them first: DT_RUNPATH, or DT_RPATH when
// there is no DT_RUNPATH (as glibc). Empty when there is no such section or
// it lies outside the file.
struct DynamicNeeds {
  std::vector<std::string> needed;
  std::string search_path;
};

DynamicNeeds read_dynamic_needs(std::ifstream& in, const Elf64_Ehdr& eh) {
  DynamicNeeds out;
  constexpr size_t kMaxString = 4096;  // PATH_MAX: no longer path or name is usable
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) return out;
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh{}, strtab{};
    if (!read_at(in, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), sh)) return out;
    if (sh.sh_type != SHT_DYNAMIC) continue;
    if (sh.sh_link >= eh.e_shnum ||
        !read_at(in, eh.e_shoff + uint64_t{sh.sh_link} * sizeof(Elf64_Shdr), strtab))
      return out;
    bool has_runpath = false;
    for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Dyn); ++k) {
      Elf64_Dyn d{};
      if (!read_at(in, sh.sh_offset + k * sizeof(Elf64_Dyn), d) || d.d_tag == DT_NULL) break;
      if ((d.d_tag != DT_NEEDED && d.d_tag != DT_RUNPATH && d.d_tag != DT_RPATH) ||
          d.d_un.d_val >= strtab.sh_size)
        continue;
      std::string text = read_string(in, strtab.sh_offset + d.d_un.d_val, kMaxString);
      if (d.d_tag == DT_NEEDED) {
        out.needed.push_back(std::move(text));
      } else if (d.d_tag == DT_RUNPATH) {
        has_runpath = true;
        out.search_path = std::move(text);
      } else if (!has_runpath) {
        out.search_path = std::move(text);
      }
    }
    return out;
  }
  return out;
}

// `entry` with each $ORIGIN and ${ORIGIN} replaced by `origin`; `expanded`
// tells whether there was one.
std::string expand_origin(const std::string& entry, const std::string& origin, bool& expanded) {
  std::string out;
  expanded = false;
  for (size_t i = 0; i < entry.size();) {
    const bool braced = entry.compare(i, 9, "${ORIGIN}") == 0;
    const bool plain = !braced && entry.compare(i, 7, "$ORIGIN") == 0 &&
                       (i + 7 == entry.size() ||
                        !(std::isalnum(static_cast<unsigned char>(entry[i + 7])) || entry[i + 7] == '_'));
    if (braced || plain) {
      out += origin;
      i += braced ? 9 : 7;
      expanded = true;
    } else {
      out += entry[i++];
    }
  }
  return out;
}

// The ELF header of a 64-bit little-endian shared object for this machine,
// or the reason `in` is not one.
std::string elf_header_problem(std::ifstream& in, Elf64_Ehdr& eh) {
  unsigned char ident[EI_NIDENT] = {};
  if (!read_at(in, 0, ident) || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    return "not a shared library (not an ELF file)";
  if (ident[EI_CLASS] != ELFCLASS64)
    return std::string("built for another platform: a ") +
           (ident[EI_CLASS] == ELFCLASS32 ? "32-bit" : "unknown-class") +
           " ELF file, this trainhook is 64-bit";
  if (ident[EI_DATA] != ELFDATA2LSB)
    return "built for another platform: a big-endian ELF file, this trainhook is little-endian";
  if (!read_at(in, 0, eh)) return "not a shared library (the ELF header is truncated)";
  if (eh.e_machine != kHostMachine)
    return "built for another platform: " + machine_name(eh.e_machine) + ", this trainhook runs on " +
           machine_name(kHostMachine);
  switch (eh.e_type) {
    case ET_DYN:
      return {};
    case ET_EXEC:
      return "not a shared library: an ELF executable (ET_EXEC); build the plugin as a shared library "
             "(trainhook_add_plugin, or add_library(... MODULE))";
    case ET_REL:
      return "not a shared library: an ELF object file (ET_REL); link it into a shared library";
    default:
      return "not a shared library: ELF type " + std::to_string(eh.e_type) + ", not ET_DYN";
  }
}

}  // namespace

std::string unsafe_mode_reason(const fs::path& path, const struct stat& st) {
  const std::string what = (S_ISDIR(st.st_mode) ? "folder " : "file ") + path.string();
  const uid_t me = ::geteuid();
  if (st.st_uid != me && st.st_uid != 0)
    return what + " is owned by " + user_name(st.st_uid) + ", not by you (" + user_name(me) +
           ") or root; its owner could change it (`chown " + login_name(me) + " " + path.string() +
           "`, or use a copy of your own)";
  if ((st.st_mode & (S_IWOTH | S_IWGRP)) != 0) {
    const bool world = (st.st_mode & S_IWOTH) != 0;
    return what + " is " + (world ? "world" : "group") + "-writable (mode " + octal_mode(st.st_mode) +
           "); anyone" + (world ? "" : " in its group") + " could change it (`chmod " +
           (world ? "go-w " : "g-w ") + path.string() + "`)";
  }
  return {};
}

std::string unsafe_path_reason(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path.string() + " cannot be inspected (stat failed)";
  if (std::string why = unsafe_mode_reason(path, st); !why.empty()) return why;
  return unsafe_ancestor_reason(path);
}

// As OpenSSH checks the path of authorized_keys (auth.c, safe_path): whoever
// can write to any folder above the file can rename the folders below it
// and put another file in their place. Every ancestor of the real path must be
// owned by you or root and writable by nobody else; a sticky folder (/tmp)
// is accepted when the folder below it is yours or root's, since the sticky
// bit stops others from renaming what they do not own.
std::string unsafe_ancestor_reason(const fs::path& path) {
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return path.string() + " cannot be inspected (" + ec.message() + ")";
  const uid_t me = ::geteuid();
  fs::path child = real;
  for (fs::path dir = real.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0)
      return "folder " + dir.string() + " (above " + path.string() + ") cannot be inspected (stat failed)";
    const std::string what = "folder " + dir.string() + ", above " + path.string() + ",";
    if (st.st_uid != me && st.st_uid != 0)
      return what + " is owned by " + user_name(st.st_uid) + ", not by you (" + user_name(me) + ") or root";
    if ((st.st_mode & (S_IWOTH | S_IWGRP)) != 0) {
      struct stat below {};
      const bool sticky_ok = (st.st_mode & S_ISVTX) != 0 && ::stat(child.c_str(), &below) == 0 &&
                             (below.st_uid == me || below.st_uid == 0);
      const bool world = (st.st_mode & S_IWOTH) != 0;
      if (!sticky_ok)
        return what + " is " + (world ? "world" : "group") + "-writable (mode " + octal_mode(st.st_mode) +
               "); anyone who can write it could rename " + child.string() +
               " and put another file in its place (`chmod " + (world ? "go-w " : "g-w ") + dir.string() +
               "`, or `chmod +t " + dir.string() + "`)";
    }
    if (dir == dir.root_path()) break;
    child = dir;
  }
  return {};
}

std::string elf_problem(const fs::path& file, const std::string& entry_symbol) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return "cannot be read (" + std::string(std::strerror(errno)) + ")";
  Elf64_Ehdr eh{};
  if (std::string problem = elf_header_problem(in, eh); !problem.empty()) return problem;
  const DynamicSymbols dyn = read_dynamic_symbols(in, eh, entry_symbol);
  if (dyn.malformed)
    return "not a shared library (its ELF section table or symbols lie past the end of the file)";
  if (!dyn.has_dynsym) return "not a shared library (no dynamic symbol table)";
  if (dyn.exports_name) return {};
  const std::string other = strings::join(dyn.entry_like);
  return "no entry symbol " + entry_symbol + " (not a Trainhook plugin, or built for another ABI" +
         (other.empty() ? std::string() : "; it exports " + other) + ")";
}

std::vector<fs::path> origin_dependencies(const fs::path& file, const fs::path& library) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in || !elf_header_problem(in, eh).empty()) return {};
  const DynamicNeeds dyn = read_dynamic_needs(in, eh);
  std::error_code ec;
  const std::string origin = fs::weakly_canonical(fs::absolute(library, ec), ec).parent_path().string();
  std::vector<fs::path> found;
  for (const std::string& needed : dyn.needed) {
    if (needed.empty() || needed.find('/') != std::string::npos) continue;  // a path: opened as named
    // The first folder of the search path that has it is the one the
    // loader would take; only one named through $ORIGIN needs our help.
    for (const std::string& entry : strings::split(dyn.search_path, ':')) {
      bool through_origin = false;
      const std::string dir = expand_origin(entry, origin, through_origin);
      if (dir.empty()) continue;
      const fs::path candidate = (fs::path(dir) / needed).lexically_normal();
      if (!fs::is_regular_file(candidate, ec)) continue;
      if (through_origin) found.push_back(candidate);
      break;
    }
  }
  return found;
}

std::string unsafe_dependency_reason(const fs::path& file, const fs::path& library) {
  for (const fs::path& dep : origin_dependencies(file, library)) {
    // The file and the folders above where it really is, and the folder the
    // search path names (a symlink there may lead out of it).
    std::string why = unsafe_path_reason(dep);
    if (why.empty()) why = unsafe_path_reason(dep.parent_path());
    if (!why.empty())
      return "its dependency " + dep.filename().string() +
             " (which its RUNPATH finds through $ORIGIN): " + why;
  }
  return {};
}

}  // namespace trainhook::detail
