#include "plugin_loader.hpp"

#include "../containment/plugin_address_table.hpp"
#include "plugin_file_checks.hpp"

#include <trainhook/common/package_version.hpp>
#include <trainhook/strings.hpp>

#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>  // dlerror(): the loader's reason for a failed Boost.DLL load
#include <fcntl.h>
#include <link.h>  // dlinfo(RTLD_DI_LINKMAP): the name the dynamic loader knows a library by
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <deque>
#include <mutex>
#include <cstring>
#include <set>

namespace trainhook::detail {
namespace fs = std::filesystem;

namespace {

constexpr size_t kErrSize = 1024;

bool valid_name(const char* s, bool allow_dash) {
  if (s == nullptr || *s == '\0') return false;
  for (const char* p = s; *p != '\0'; ++p) {
    const char c = *p;
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (allow_dash && c == '-')))
      return false;
  }
  return true;
}

std::string quoted(const char* s) {
  return s == nullptr ? std::string("(null)") : "'" + std::string(s) + "'";
}

// Copies the static information a library returned into `lib` (host-owned,
// zeroed structs; see PluginLibrary) and validates it; "" when usable. The
// plugin's arrays are arrays of pointers, so each element is read through its
// own pointer and only up to its own struct_size.
std::string copy_plugin_info(const th_plugin_info* raw, detail::PluginLibrary& lib) {
  if (raw == nullptr) return "entry " TRAINHOOK_ENTRY_SYMBOL " returned TH_OK but no plugin information";
  if (!TH_HAS_FIELD(raw, th_plugin_info, callbacks))
    return "th_plugin_info.struct_size is " + std::to_string(raw->struct_size) + ", smaller than ABI 1.0's " +
           std::to_string(TH_STRUCT_SIZE(th_plugin_info, callbacks));
  const th_plugin_info info = detail::abi_copy(*raw, TH_PLUGIN_INFO_STRUCT_SIZE);
  const std::string host_abi =
      std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) + "." + std::to_string(TRAINHOOK_ABI_VERSION_MINOR);
  const std::string plugin_abi = std::to_string(info.abi_major) + "." + std::to_string(info.abi_minor);
  if (info.abi_major != TRAINHOOK_ABI_VERSION_MAJOR)
    return "ABI major version mismatch: the plugin was built for ABI " + plugin_abi +
           ", this trainhook speaks ABI " + host_abi + " (rebuild the plugin against this SDK)";
  if (info.abi_minor > TRAINHOOK_ABI_VERSION_MINOR)
    return "the plugin was built for ABI " + plugin_abi + ", newer than this trainhook's ABI " + host_abi +
           " (upgrade trainhook, or rebuild the plugin against this SDK)";
  if (!valid_name(info.name, true)) return "plugin name " + quoted(info.name) + " is not [a-z0-9_-]+";
  if (info.version == nullptr) return "plugin " + quoted(info.name) + " has no version";
  if (info.callback_count > 0 && info.callbacks == nullptr)
    return "callback_count is " + std::to_string(info.callback_count) + " but callbacks is NULL";
  lib.callbacks.assign(info.callback_count, th_callback_info{});
  lib.vtables.assign(info.callback_count, th_callback_vtable{});
  std::set<std::string> names;
  for (uint32_t i = 0; i < info.callback_count; ++i) {
    if (info.callbacks[i] == nullptr) return "callback #" + std::to_string(i) + " is NULL";
    const th_callback_info& in = *info.callbacks[i];
    const std::string which = "callback #" + std::to_string(i) + " " +
                              quoted(TH_HAS_FIELD(&in, th_callback_info, name) ? in.name : nullptr);
    if (!TH_HAS_FIELD(&in, th_callback_info, vtable))
      return which + ": th_callback_info.struct_size " + std::to_string(in.struct_size) + " is too small";
    th_callback_info& cb = lib.callbacks[i] = detail::abi_copy(in, TH_CALLBACK_INFO_STRUCT_SIZE);
    if (!valid_name(cb.name, false)) return which + ": name is not [a-z0-9_]+";
    if (!names.insert(cb.name).second) return which + ": the library exports this name twice";
    if (cb.version == nullptr) return which + ": no version";
    if (cb.kind != TH_KIND_CALLBACK && cb.kind != TH_KIND_INTEGRATION)
      return which + ": unknown kind " + std::to_string(cb.kind);
    if (cb.create == nullptr) return which + ": create is NULL";
    if (!TH_HAS_FIELD(cb.vtable, th_callback_vtable, destroy) || cb.vtable->on_event == nullptr ||
        cb.vtable->destroy == nullptr)
      return which + ": vtable is missing, too small, or lacks on_event/destroy";
    lib.vtables[i] = detail::abi_copy(*cb.vtable, TH_CALLBACK_VTABLE_STRUCT_SIZE);
    cb.vtable = &lib.vtables[i];
  }
  const uint32_t command_count =
      TH_HAS_FIELD(&info, th_plugin_info, commands) && info.commands != nullptr ? info.command_count : 0;
  if (TH_HAS_FIELD(&info, th_plugin_info, commands) && info.command_count > 0 && info.commands == nullptr)
    return "command_count is " + std::to_string(info.command_count) + " but commands is NULL";
  lib.commands.assign(command_count, th_command_info{});
  std::set<std::string> commands;
  for (uint32_t i = 0; i < command_count; ++i) {
    if (info.commands[i] == nullptr) return "command #" + std::to_string(i) + " is NULL";
    const th_command_info& in = *info.commands[i];
    const std::string which = "command #" + std::to_string(i) + " " +
                              quoted(TH_HAS_FIELD(&in, th_command_info, name) ? in.name : nullptr);
    if (!TH_HAS_FIELD(&in, th_command_info, run) || in.run == nullptr)
      return which + ": run is NULL or missing";
    const th_command_info& c = lib.commands[i] = detail::abi_copy(in, TH_COMMAND_INFO_STRUCT_SIZE);
    if (!valid_name(c.name, true)) return which + ": name is not [a-z0-9-]+";
    if (!commands.insert(c.name).second) return which + ": the library exports this name twice";
  }
  for (const auto& cb : lib.callbacks) lib.callback_ptrs.push_back(&cb);
  for (const auto& c : lib.commands) lib.command_ptrs.push_back(&c);
  lib.info_copy = info;
  lib.info_copy.callbacks = lib.callback_ptrs.data();
  lib.info_copy.command_count = command_count;
  lib.info_copy.commands = lib.command_ptrs.data();
  lib.info = &lib.info_copy;
  return {};
}

uint32_t command_count(const th_plugin_info* info) {
  return TH_HAS_FIELD(info, th_plugin_info, commands) && info->commands != nullptr ? info->command_count : 0;
}

// "" when the object behind `handle` is the file open in `file`; glibc hands
// back an object it loaded before when the name or the (device, inode)
// matches one, so the check is on the object it returned.
std::string loaded_object_problem(void* handle, const PluginFile& file) {
  link_map* map = nullptr;
  struct stat st {};
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return "the dynamic loader cannot say which file it loaded";
  if (::stat(map->l_name, &st) != 0 || st.st_dev != file.opened_stat().st_dev ||
      st.st_ino != file.opened_stat().st_ino)
    return std::string("the dynamic loader handed back another file, ") + map->l_name +
           ", loaded before under the same name";
  return {};
}

// The loader knows the library as /proc/self/fd/N; what the plugin sees of
// itself (dladdr, dl_iterate_phdr: a folder of its own data, a later dlopen
// through $ORIGIN) and what the host's messages name is its real path: the
// same file (checked above), named as the user named it. The names live for
// the process (RTLD_NODELETE: the object is never unmapped), held from a
// global so that they stay reachable (the loader's own memory is no root).
void name_loaded_object(void* handle, const fs::path& real) {
  static auto* const names = new std::deque<std::string>();  // never freed: the loader points into it
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
  std::error_code ec;
  const fs::path absolute = fs::absolute(real, ec);
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  names->push_back((ec ? real : absolute).string());
  map->l_name = names->back().data();
}

}  // namespace

std::shared_ptr<const PluginLibrary> load_plugin_library(const fs::path& file, LibraryRecord& rec,
                                                         const FileIdentity* expected) {
  PluginFile opened(file);
  if (opened.is_open() && expected != nullptr && opened.identity() != *expected) {
    const FileIdentity now = opened.identity();
    rec.refused_reason = std::string(kNotTheJudgedFile) + file.string() +
                         (now.dev == expected->dev && now.ino == expected->ino
                              ? " was written to after it was checked"
                              : " was replaced by another file after it was checked") +
                         " (file identity " + expected->to_text() + " when checked, " + now.to_text() +
                         " now)";
    return nullptr;
  }
  return load_plugin_library(opened, rec);
}

std::shared_ptr<const PluginLibrary> load_passed_plugin_library(const fs::path& file, LibraryRecord& rec) {
  const std::string name = file.string();
  int passed = -1;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd", ec)) {
    const std::string n = entry.path().filename().string();
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    const int fd = std::stoi(n);
    const int flags = ::fcntl(fd, F_GETFD);
    if (fd <= STDERR_FILENO || flags < 0 || (flags & FD_CLOEXEC) != 0) continue;  // not inherited
    const fs::path target = fs::read_symlink(entry.path(), ec);
    if (ec || (target.string() != name && target.string() != name + " (deleted)")) continue;
    if (passed >= 0) {
      struct stat a {
      }, b{};
      if (::fstat(passed, &a) != 0 || ::fstat(fd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
        rec.refused_reason = std::string(kNotTheJudgedFile) + "this process inherited descriptors of " +
                             name + " for two different files (" + std::to_string(passed) + " and " + n +
                             "); which one was checked is not known";
        return nullptr;
      }
      continue;
    }
    passed = fd;
  }
  if (passed < 0) return load_plugin_library(file, rec);
  // A copy of our own; the inherited one goes no further than this process
  // (not on to what the plugin starts).
  const int copy = ::fcntl(passed, F_DUPFD_CLOEXEC, 0);
  (void)::fcntl(passed, F_SETFD, FD_CLOEXEC);
  if (copy < 0) {
    rec.refused_reason =
        "the descriptor passed for it cannot be used (" + std::string(std::strerror(errno)) + ")";
    return nullptr;
  }
  PluginFile opened(file, copy);
  return load_plugin_library(opened, rec);
}

std::shared_ptr<const PluginLibrary> load_plugin_library(PluginFile& file, LibraryRecord& rec) {
  if (!file.is_open()) {
    rec.refused_reason = file.problem();
    return nullptr;
  }
  // One mechanism: the ELF pre-check reads the descriptor's file, then
  // Boost.DLL loads that same file.
  const std::string opened = file.proc_path();
  if (std::string problem = detail::elf_problem(opened, TRAINHOOK_ENTRY_SYMBOL); !problem.empty()) {
    rec.refused_reason = problem;
    return nullptr;
  }
  if (std::string changed = file.changed_since_opened(); !changed.empty()) {
    rec.refused_reason = kNotTheJudgedFile + changed;
    return nullptr;
  }
  if (std::string why = file.load_origin_dependencies(); !why.empty()) {
    rec.refused_reason = "cannot be loaded: " + why;
    return nullptr;
  }
  auto lib = std::make_shared<PluginLibrary>();
  lib->path = rec.path;
  std::error_code ec;
  (void)::dlerror();  // clear a stale message, so the one read below is this load's
  // RTLD_NODELETE: dlclose (the last PluginLibrary let go) leaves the library
  // mapped, so its destructors run only in exit() after everything is saved,
  // a thread it left running never executes unmapped code, and the crash
  // handler's address table stays true (plugin_address_table.hpp).
  lib->library.load(opened,
                    boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local |
                        static_cast<boost::dll::load_mode::type>(RTLD_NODELETE),
                    ec);
  if (ec || !lib->library.is_loaded()) {
    // Boost.DLL (1.74) reports every dlopen failure as "Bad file descriptor" and
    // leaves the loader's own message (the missing symbol or library, the wrong
    // format) in dlerror(); read it before anything else calls the loader.
    const char* loader = ::dlerror();
    std::string why = loader != nullptr ? std::string(loader) : ec.message() + " (no loader message)";
    // The loader names the file by the name it was given: show the file's own.
    for (size_t at = why.find(opened); at != std::string::npos; at = why.find(opened, at + 1))
      why.replace(at, opened.size(), file.path().string());
    rec.refused_reason = "cannot be loaded: " + why;
    return nullptr;
  }
  // The loader knows the library by `opened` now: that name must go on naming it.
  file.keep_open_for_process();
  std::string swapped = loaded_object_problem(lib->library.native(), file);
  if (swapped.empty()) swapped = file.changed_since_opened();
  if (!swapped.empty()) {
    rec.refused_reason = kNotTheJudgedFile + swapped;
    return nullptr;
  }
  name_loaded_object(lib->library.native(), file.path());
  if (!lib->library.has(TRAINHOOK_ENTRY_SYMBOL)) {
    rec.refused_reason = "no entry symbol " TRAINHOOK_ENTRY_SYMBOL " after loading";
    return nullptr;
  }
  auto entry = lib->library.get<std::remove_pointer_t<th_plugin_entry_fn>>(TRAINHOOK_ENTRY_SYMBOL);
  // Before any more of its code runs: a crash from here on is named by address.
  const void* entry_address = reinterpret_cast<const void*>(entry);
  (void)enter_plugin_library(entry_address, rec.path.string());
  const th_host_info host{TH_HOST_INFO_STRUCT_SIZE, TRAINHOOK_ABI_VERSION_MAJOR, TRAINHOOK_ABI_VERSION_MINOR,
                          package_version()};
  char err[kErrSize];
  err[0] = '\0';
  const th_plugin_info* info = nullptr;
  const th_status st = entry(&host, &info, err, sizeof err);
  err[kErrSize - 1] = '\0';
  if (st != TH_OK) {
    const std::string msg = err[0] != '\0' ? err : "no message";
    rec.refused_reason =
        st == TH_ABI_MISMATCH
            ? "ABI negotiation failed: the plugin refused this trainhook (ABI " +
                  std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) + "." +
                  std::to_string(TRAINHOOK_ABI_VERSION_MINOR) + "): " + msg
            : "entry " TRAINHOOK_ENTRY_SYMBOL " returned error " + std::to_string(st) + ": " + msg;
    return nullptr;
  }
  if (std::string problem = copy_plugin_info(info, *lib); !problem.empty()) {
    rec.refused_reason = problem;
    if (info != nullptr && TH_HAS_FIELD(info, th_plugin_info, abi_minor)) {
      rec.abi_major = info->abi_major;
      rec.abi_minor = info->abi_minor;
    }
    return nullptr;
  }
  info = lib->info;
  name_plugin_library(entry_address, info->name);
  rec.loaded = true;
  rec.plugin_name = info->name;
  rec.plugin_version = info->version;
  rec.abi_major = info->abi_major;
  rec.abi_minor = info->abi_minor;
  for (uint32_t i = 0; i < info->callback_count; ++i) {
    const th_callback_info& cb = *info->callbacks[i];
    rec.callbacks.push_back(
        {cb.name, cb.version, cb.kind, cb.description != nullptr ? cb.description : "", {}});
    rec.callbacks.back().event_mask = cb.event_mask;
  }
  for (uint32_t i = 0; i < command_count(info); ++i) {
    const th_command_info& c = *info->commands[i];
    rec.commands.push_back({c.name, c.description != nullptr ? c.description : "", {}});
  }
  return lib;
}

const th_callback_info* find_callback(const PluginLibrary& library, const std::string& name) {
  for (uint32_t i = 0; i < library.info->callback_count; ++i)
    if (name == library.info->callbacks[i]->name) return library.info->callbacks[i];
  return nullptr;
}

}  // namespace trainhook::detail
