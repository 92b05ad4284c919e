// Plugin discovery and loading. Every refusal is recorded with a reason naming
// the file; only problems the user must resolve before a run (duplicate names,
// a missing --plugin_dir, an unknown name) throw.
#include <trainhook/plugin_host/plugin_registry.hpp>
#include <trainhook/strings.hpp>

#include "host_table.hpp"
#include "plugin_callback.hpp"
#include "plugin_file_checks.hpp"
#include "plugin_library.hpp"
#include "plugin_loader.hpp"

#include <trainhook/plugin_host/plugin_file_name.hpp>

#include <spdlog/spdlog.h>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <dlfcn.h>  // dlerror(): the loader's reason for a failed Boost.DLL load
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#ifndef TRAINHOOK_VERSION
#define TRAINHOOK_VERSION "0.0.0"
#endif
#ifndef TRAINHOOK_PLUGIN_REL_DIR
#define TRAINHOOK_PLUGIN_REL_DIR "lib/trainhook/plugins"
#endif

namespace trainhook {
namespace fs = std::filesystem;
using detail::PluginLibrary;

namespace {

constexpr size_t kErrSize = 1024;

const char* kind_name(int32_t kind) { return kind == TH_KIND_INTEGRATION ? "integration" : "callback"; }

using strings::join;

bool is_candidate_file(const fs::path& p) { return !plugin_name_of_file(p.filename().string()).empty(); }

}  // namespace

fs::path default_plugin_dir() {
  std::error_code ec;
  const fs::path bin = boost::dll::program_location(ec).parent_path();
  if (ec) return fs::path(TRAINHOOK_PLUGIN_REL_DIR);
  const fs::path installed = (bin / ".." / TRAINHOOK_PLUGIN_REL_DIR).lexically_normal();
  // The build tree always uses lib/trainhook/plugins; an install may use lib64/...
  const fs::path build_tree = (bin / ".." / "lib" / "trainhook" / "plugins").lexically_normal();
  return fs::is_directory(installed, ec) ? installed : build_tree;
}

struct PluginRegistry::Impl {
  PluginSearchOptions options;
  std::vector<std::pair<fs::path, std::string>> dirs;  // searched folder, where it came from
  std::vector<LibraryRecord> records;
  struct CallbackEntry {
    std::shared_ptr<const PluginLibrary> library;
    const th_callback_info* info;
  };
  struct CommandEntry {
    std::shared_ptr<const PluginLibrary> library;
    const th_command_info* info;
  };
  // In search order; the first library wins a name (duplicates are refused
  // unless allowed).
  std::vector<std::pair<std::string, CallbackEntry>> callbacks;
  std::vector<std::pair<std::string, CommandEntry>> commands;

  void scan();
  void scan_file(const fs::path& file, const std::string& folder_problem, std::set<fs::path>& seen);
  void resolve_duplicates(const std::vector<std::shared_ptr<const PluginLibrary>>& loaded);
  const CallbackEntry* find(const std::string& name) const;
  std::string unknown_name_message(const std::string& what, const std::string& name,
                                   const std::vector<std::string>& available) const;
};

void PluginRegistry::Impl::scan() {
  for (const auto& d : options.plugin_dirs) dirs.emplace_back(d, "--plugin_dir");
  if (options.use_environment) {
    if (const char* env = std::getenv("TRAINHOOK_PLUGIN_PATH")) {
      std::stringstream ss(env);
      std::string item;
      while (std::getline(ss, item, ':'))
        if (!item.empty()) dirs.emplace_back(item, "TRAINHOOK_PLUGIN_PATH");
    }
  }
  dirs.emplace_back(options.default_dir.empty() ? default_plugin_dir() : options.default_dir, "default");

  std::set<fs::path> seen;  // canonical paths: a library found twice is loaded once
  std::vector<std::shared_ptr<const PluginLibrary>> loaded;
  for (size_t folder = 0; folder < dirs.size(); ++folder) {
    const auto& [dir, origin] = dirs[folder];
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      if (origin == "--plugin_dir")
        throw PluginError("--plugin_dir " + dir.string() + ": no such file or folder");
      continue;  // stale TRAINHOOK_PLUGIN_PATH entries and a missing default folder are normal
    }
    std::vector<fs::path> files;
    std::string folder_problem;
    if (fs::is_directory(dir, ec)) {
      if (!options.allow_unsafe_plugin_paths) folder_problem = detail::unsafe_path_reason(dir);
      for (const auto& entry : fs::directory_iterator(dir, ec))
        if (entry.is_regular_file(ec) && is_candidate_file(entry.path())) files.push_back(entry.path());
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(dir);  // --plugin_dir may name one library file
      if (!options.allow_unsafe_plugin_paths)
        folder_problem = detail::unsafe_path_reason(dir.parent_path().empty() ? "." : dir.parent_path());
    }
    for (const auto& file : files) {
      const fs::path canonical = fs::weakly_canonical(file, ec);
      if (!seen.insert(ec ? file : canonical).second) continue;
      LibraryRecord rec;
      rec.path = file;
      rec.folder = folder;
      if (!folder_problem.empty()) {
        rec.refused_reason =
            "unsafe plugin path: " + folder_problem + " (pass --allow_unsafe_plugin_paths to load anyway)";
      } else if (!options.allow_unsafe_plugin_paths) {
        // The file itself, and where a symlink really points.
        std::string problem = detail::unsafe_path_reason(file);
        if (problem.empty() && canonical != file)
          problem = detail::unsafe_path_reason(canonical.parent_path());
        if (!problem.empty())
          rec.refused_reason =
              "unsafe plugin path: " + problem + " (pass --allow_unsafe_plugin_paths to load anyway)";
      }
      std::shared_ptr<const PluginLibrary> lib;
      if (rec.refused_reason.empty()) lib = detail::load_plugin_library(ec ? file : canonical, rec);
      if (lib) {
        loaded.push_back(lib);
        std::vector<std::string> names;
        for (const auto& cb : rec.callbacks) names.push_back(cb.name);
        for (const auto& c : rec.commands) names.push_back(c.name + " (command)");
        spdlog::info("loaded plugin '{}' {} (ABI {}.{}) from {}: {}", rec.plugin_name, rec.plugin_version,
                     rec.abi_major, rec.abi_minor, file.string(),
                     names.empty() ? "(nothing exported)" : join(names));
      } else {
        spdlog::warn("refused plugin file {}: {}", file.string(), rec.refused_reason);
      }
      records.push_back(std::move(rec));
    }
  }
  resolve_duplicates(loaded);
}

void PluginRegistry::Impl::resolve_duplicates(
    const std::vector<std::shared_ptr<const PluginLibrary>>& loaded) {
  // The folder each loaded library came from: a library in an earlier folder
  // overrides (a --plugin_dir or TRAINHOOK_PLUGIN_PATH folder comes before
  // the default one); two in the same folder clash.
  std::map<const PluginLibrary*, size_t> folder_of;
  {
    size_t i = 0;
    for (const auto& rec : records)
      if (rec.loaded) folder_of[loaded[i++].get()] = rec.folder;
  }
  std::vector<std::string> clashes;
  // Records the earlier library `winner` taking `what` from `rec`.
  auto shadow = [&](const std::shared_ptr<const PluginLibrary>& winner, LibraryRecord& rec,
                    const std::string& what, fs::path& shadowed_by, bool& overridden) {
    shadowed_by = winner->path;
    overridden = folder_of[winner.get()] < rec.folder;
    if (overridden) {
      spdlog::info("{} from {} overrides the one in {} (found later in the plugin search path)", what,
                   winner->path.string(), rec.path.string());
    } else {
      clashes.push_back(what + " is exported by both " + winner->path.string() + " and " + rec.path.string());
    }
  };
  size_t lib_index = 0;
  for (auto& rec : records) {
    if (!rec.loaded) continue;
    const auto& lib = loaded[lib_index++];
    for (uint32_t i = 0; i < lib->info->callback_count; ++i) {
      const th_callback_info* cb = lib->info->callbacks[i];
      const auto* first = find(cb->name);
      if (first == nullptr) {
        callbacks.push_back({cb->name, {lib, cb}});
        continue;
      }
      shadow(first->library, rec, "callback '" + std::string(cb->name) + "'", rec.callbacks[i].shadowed_by,
             rec.callbacks[i].overridden);
    }
    for (uint32_t i = 0; i < lib->info->command_count; ++i) {  // the copy has 0 when absent
      const th_command_info* c = lib->info->commands[i];
      auto it =
          std::find_if(commands.begin(), commands.end(), [&](const auto& e) { return e.first == c->name; });
      if (it == commands.end()) {
        commands.push_back({c->name, {lib, c}});
        continue;
      }
      shadow(it->second.library, rec, "command '" + std::string(c->name) + "'", rec.commands[i].shadowed_by,
             rec.commands[i].overridden);
    }
  }
  if (clashes.empty()) return;
  if (!options.allow_duplicate_plugins)
    throw PluginError(
        "duplicate plugin names: " + join(clashes, "; ") +
        ". Remove one of the libraries, or pass --allow_duplicate_plugins to use the first one in "
        "search order");
  for (const auto& c : clashes) spdlog::warn("{}; using the first one in search order", c);
}

const PluginRegistry::Impl::CallbackEntry* PluginRegistry::Impl::find(const std::string& name) const {
  for (const auto& [n, e] : callbacks)
    if (n == name) return &e;
  return nullptr;
}

std::string PluginRegistry::Impl::unknown_name_message(const std::string& what, const std::string& name,
                                                       const std::vector<std::string>& available) const {
  std::string msg = "unknown " + what + " '" + name + "'.";
  if (const std::string close = closest_name(name, available); !close.empty())
    msg += " Did you mean '" + close + "'?";
  msg += " Available: " + (available.empty() ? std::string("(none)") : join(available)) + ".";
  // Name the refused file that would have provided it, if its name says so.
  for (const auto& rec : records)
    if (!rec.loaded && rec.path.filename().string() == plugin_file_name(name))
      msg += " " + rec.path.string() + " was found but refused: " + rec.refused_reason + ".";
  std::vector<std::string> searched;
  for (const auto& [dir, origin] : dirs) searched.push_back(dir.string() + " (" + origin + ")");
  msg += " Searched: " + join(searched) + ".";
  return msg;
}

PluginRegistry::PluginRegistry(const PluginSearchOptions& options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->scan();
}

PluginRegistry::~PluginRegistry() = default;
PluginRegistry::PluginRegistry(PluginRegistry&&) noexcept = default;
PluginRegistry& PluginRegistry::operator=(PluginRegistry&&) noexcept = default;

const std::vector<LibraryRecord>& PluginRegistry::libraries() const noexcept { return impl_->records; }

std::vector<std::string> PluginRegistry::searched_dirs() const {
  std::vector<std::string> out;
  for (const auto& d : impl_->dirs) out.push_back(d.first.string());
  return out;
}

std::vector<std::string> PluginRegistry::available(int32_t kind) const {
  std::vector<std::string> out;
  for (const auto& [name, e] : impl_->callbacks)
    if (e.info->kind == kind) out.push_back(name);
  return out;
}

bool PluginRegistry::has(const std::string& callback_name) const {
  return impl_->find(callback_name) != nullptr;
}

std::vector<std::string> PluginRegistry::resolve_report_to(const std::vector<std::string>& report_to) const {
  const std::vector<std::string> integrations = available(TH_KIND_INTEGRATION);
  std::vector<std::string> out;
  auto add = [&](const std::string& n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  const bool has_none = std::find(report_to.begin(), report_to.end(), "none") != report_to.end();
  if (has_none && report_to.size() > 1)
    throw PluginError("report_to: 'none' cannot be combined with other names (got " + join(report_to) + ")");
  for (const auto& name : report_to) {
    if (name == "none") continue;
    if (name == "all") {
      for (const auto& n : integrations) add(n);
      continue;
    }
    const auto* e = impl_->find(name);
    if (e == nullptr)
      throw PluginError("report_to: " + impl_->unknown_name_message("integration", name, integrations));
    if (e->info->kind != TH_KIND_INTEGRATION)
      throw PluginError("report_to: '" + name +
                        "' is a callback, not an integration; enable it with --callbacks " + name);
    add(name);
  }
  return out;
}

void PluginRegistry::check_callbacks(const std::vector<std::string>& names) const {
  std::vector<std::string> all;
  for (const auto& [n, e] : impl_->callbacks) all.push_back(n);
  for (const auto& name : names)
    if (impl_->find(name) == nullptr)
      throw PluginError("callbacks: " + impl_->unknown_name_message("callback", name, all));
}

std::unique_ptr<detail::InternalCallback> PluginRegistry::create(const std::string& callback_name,
                                                                 HostServices& host,
                                                                 const std::string& config_json) const {
  const auto* e = impl_->find(callback_name);
  if (e == nullptr) {
    std::vector<std::string> all;
    for (const auto& [n, entry] : impl_->callbacks) all.push_back(n);
    throw PluginError(impl_->unknown_name_message("callback", callback_name, all));
  }
  return std::make_unique<detail::PluginCallback>(e->library, *e->info, host, config_json);
}

fs::path PluginRegistry::library_of(const std::string& callback_name) const {
  const auto* e = impl_->find(callback_name);
  if (e == nullptr) {
    std::vector<std::string> all;
    for (const auto& [n, entry] : impl_->callbacks) all.push_back(n);
    throw PluginError(impl_->unknown_name_message("callback", callback_name, all));
  }
  return e->library->path;
}

std::vector<std::string> PluginRegistry::command_names() const {
  std::vector<std::string> out;
  for (const auto& c : impl_->commands) out.push_back(c.first);
  return out;
}

bool PluginRegistry::has_command(const std::string& name) const {
  for (const auto& c : impl_->commands)
    if (c.first == name) return true;
  return false;
}

int PluginRegistry::run_command(const std::string& name, const std::vector<std::string>& args,
                                HostServices& host) const {
  auto it = std::find_if(impl_->commands.begin(), impl_->commands.end(),
                         [&](const auto& c) { return c.first == name; });
  if (it == impl_->commands.end())
    throw PluginError(impl_->unknown_name_message("command", name, command_names()));
  const Impl::CommandEntry& cmd = it->second;
  detail::HostTable bridge(host, name);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  int32_t exit_code = 0;
  char err[kErrSize];
  err[0] = '\0';
  const th_status st = cmd.info->run(bridge.table(), static_cast<int32_t>(args.size()), argv.data(),
                                     &exit_code, err, sizeof err);
  err[kErrSize - 1] = '\0';
  if (st != TH_OK)
    throw PluginError("command '" + name + "' (" + cmd.library->path.string() + ") failed: " +
                      (err[0] != '\0' ? err : "no message") + " [status " + std::to_string(st) + "]");
  return exit_code;
}

namespace {
std::string shadow_note(const fs::path& by, bool overridden) {
  return overridden ? "  [OVERRIDDEN by " + by.string() + ", earlier in the search path]"
                    : "  [DUPLICATE: ignored, " + by.string() + " comes first]";
}
}  // namespace

std::string PluginRegistry::describe() const {
  std::ostringstream out;
  out << "Plugin search path, in order:\n";
  for (const auto& [dir, origin] : impl_->dirs) {
    std::error_code ec;
    out << "  " << dir.string() << "  (" << origin << (fs::exists(dir, ec) ? "" : ", missing") << ")\n";
  }
  if (impl_->records.empty()) out << "\nNo plugin libraries (" << plugin_file_glob() << ") found.\n";
  for (const auto& rec : impl_->records) {
    out << "\n" << rec.path.string() << "\n";
    if (!rec.loaded) {
      out << "  REFUSED: " << rec.refused_reason << "\n";
      continue;
    }
    out << "  plugin " << rec.plugin_name << " " << rec.plugin_version << ", ABI " << rec.abi_major << "."
        << rec.abi_minor << "\n";
    for (const auto& cb : rec.callbacks) {
      out << "  " << kind_name(cb.kind) << " " << cb.name << " " << cb.version;
      if (!cb.description.empty()) out << "  - " << cb.description;
      if (!cb.shadowed_by.empty()) out << shadow_note(cb.shadowed_by, cb.overridden);
      out << "\n";
    }
    for (const auto& c : rec.commands) {
      out << "  command " << c.name;
      if (!c.description.empty()) out << "  - " << c.description;
      if (!c.shadowed_by.empty()) out << shadow_note(c.shadowed_by, c.overridden);
      out << "\n";
    }
  }
  return out.str();
}

}  // namespace trainhook
