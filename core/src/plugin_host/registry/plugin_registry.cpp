// Plugin discovery and loading. Every refusal is recorded with a reason naming
// the file; only problems the user must resolve before a run (duplicate names,
// a missing --plugin_dir, an unknown name) throw.
#include <trainhook/plugin_host/registry/plugin_registry.hpp>

#include <trainhook/args/report_to_rules.hpp>
#include <trainhook/strings.hpp>

#include "../host/host_table.hpp"
#include "../host/plugin_callback.hpp"
#include "../isolation/helper_executable.hpp"
#include "plugin_file.hpp"
#include "plugin_file_checks.hpp"
#include "plugin_library.hpp"
#include "plugin_loader.hpp"
#include "plugin_lock_file.hpp"
#include "plugin_scan.hpp"
#include "registry_cache.hpp"

#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/registry/plugin_file_name.hpp>

#include <spdlog/spdlog.h>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

namespace trainhook {
namespace fs = std::filesystem;
using detail::PluginLibrary;

namespace {

constexpr size_t kErrSize = 1024;

const char* kind_name(int32_t kind) { return kind == TH_KIND_INTEGRATION ? "integration" : "callback"; }

using strings::join;

bool is_candidate_file(const fs::path& p) { return !plugin_name_of_file(p.filename().string()).empty(); }

}  // namespace

struct PluginRegistry::Impl {
  PluginSearchOptions options;
  std::vector<std::pair<fs::path, std::string>> dirs;  // searched folder, where it came from
  std::vector<LibraryRecord> records;
  std::vector<fs::path> open_paths;  // per record: the canonical file that is opened
  // Per record: the SHA-256 of the bytes its scan judged ("" when refused
  // before scanning), and, once checked before a load in this run, the
  // descriptor found to hold them: what is loaded here or passed to a
  // runner, never the path opened again. Guarded by load_mu once the
  // constructor has returned.
  mutable std::vector<std::string> scanned_sha256;
  mutable std::vector<std::shared_ptr<detail::PluginFile>> judged;
  // What scanning needs again when a library changed before it is loaded.
  mutable detail::RegistryCache cache{fs::path()};
  std::optional<detail::PluginLockFile> lock;
  mutable fs::path scanner;  // located when the first library needs scanning
  // A name's provider: records[record], its callbacks[index] (or commands[index]).
  struct Entry {
    size_t record;
    size_t index;
  };
  // In search order; the first library wins a name (duplicates are refused
  // unless allowed).
  std::vector<std::pair<std::string, Entry>> callbacks;
  std::vector<std::pair<std::string, Entry>> commands;
  // Libraries loaded into this process, on first use (create, run_command).
  mutable std::mutex load_mu;
  mutable std::map<size_t, std::shared_ptr<const PluginLibrary>> loaded;
  // Libraries read by the scanner (not from the cache), at construction or
  // because one changed before it was loaded.
  mutable std::atomic<size_t> scanned{0};

  void scan();
  void scan_file(const fs::path& file, size_t folder, const std::string& folder_problem,
                 std::set<fs::path>& seen);
  std::string scan_with_helper(const detail::PluginFile& file, std::string sha256, LibraryRecord& rec) const;
  detail::PluginFile& check_unchanged(size_t record) const;
  size_t record_of(const std::string& callback_name) const;
  void resolve_duplicates();
  const Entry* find(const std::string& name) const;
  const CallbackDescriptor& descriptor(const Entry& e) const { return records[e.record].callbacks[e.index]; }
  std::shared_ptr<const PluginLibrary> library(size_t record) const;
  std::string unknown_name_message(const std::string& what, const std::string& name,
                                   const std::vector<std::string>& available) const;
};

void PluginRegistry::Impl::scan() {
  dirs = plugin_search_dirs(options);

  cache = detail::RegistryCache::from_environment();
  // The default folder is the trainer's own: its plugins are covered by their installed digests.
  lock = detail::PluginLockFile::from_environment(dirs.back().first, options.allow_unsafe_plugin_paths);
  std::set<fs::path> seen;  // canonical paths: a library found twice is listed once
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
    for (const auto& file : files) scan_file(file, folder, folder_problem, seen);
  }
  cache.save();
  resolve_duplicates();
}

namespace {

// The scan's verdict on one library, as the log shows it.
void log_verdict(const LibraryRecord& rec, bool from_cache) {
  if (rec.loaded) {
    std::vector<std::string> names;
    for (const auto& cb : rec.callbacks) names.push_back(cb.name);
    for (const auto& c : rec.commands) names.push_back(c.name + " (command)");
    const auto level = from_cache ? spdlog::level::debug : spdlog::level::info;
    spdlog::log(level, "{} plugin '{}' {} (ABI {}.{}) in {}: {}", from_cache ? "registry cache:" : "scanned",
                rec.plugin_name, rec.plugin_version, rec.abi_major, rec.abi_minor, rec.path.string(),
                names.empty() ? "(nothing exported)" : join(names));
  } else {
    spdlog::warn("refused plugin file {}: {}{}", rec.path.string(), rec.refused_reason,
                 from_cache ? " (remembered in the registry cache until the file changes)" : "");
  }
}

std::string seconds_text(std::chrono::milliseconds t) {
  std::string s = fmt::format("{:.1f}", static_cast<double>(t.count()) / 1000.0);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

}  // namespace

namespace {

// The SHA-256 of the bytes open in `file` (read through its descriptor);
// throws std::runtime_error naming the file.
std::string sha256_of(const detail::PluginFile& file) {
  try {
    return sha256_of_file(file.proc_path());
  } catch (const std::runtime_error&) {
    throw std::runtime_error(file.path().string() + " cannot be read");
  }
}

}  // namespace

void PluginRegistry::Impl::scan_file(const fs::path& file, size_t folder, const std::string& folder_problem,
                                     std::set<fs::path>& seen) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(file, ec);
  const fs::path opened = ec ? file : canonical;
  if (!seen.insert(opened).second) return;
  LibraryRecord rec;
  rec.path = file;
  rec.folder = folder;
  // Opened once: the owner and mode, the digest, the cache's key and the
  // scanner's verdict are all about this descriptor's file.
  const detail::PluginFile f(opened);
  if (!folder_problem.empty()) {
    rec.refused_reason =
        "unsafe plugin path: " + folder_problem + " (pass --allow_unsafe_plugin_paths to load anyway)";
  } else if (!f.is_open()) {
    rec.refused_reason = f.problem();
  } else if (!options.allow_unsafe_plugin_paths) {
    // The file itself, the folders above it, where a symlink really points,
    // and the libraries it needs beside it (loaded by path, not through f).
    std::string problem = detail::unsafe_mode_reason(file, f.opened_stat());
    if (problem.empty()) problem = detail::unsafe_ancestor_reason(file);
    if (problem.empty() && canonical != file) problem = detail::unsafe_path_reason(canonical.parent_path());
    if (problem.empty()) problem = detail::unsafe_dependency_reason(f.proc_path(), opened);
    if (!problem.empty())
      rec.refused_reason =
          "unsafe plugin path: " + problem + " (pass --allow_unsafe_plugin_paths to load anyway)";
  }
  std::string sha256;
  if (rec.refused_reason.empty() && lock) {
    try {
      sha256 = sha256_of(f);
      rec.refused_reason = lock->refusal(opened, sha256);
    } catch (const std::runtime_error& e) {
      rec.refused_reason = std::string("pinned by ") + lock->file().string() + ", but " + e.what();
    }
  }
  bool from_cache = false;
  if (rec.refused_reason.empty()) {
    // Read by the scanner process, or remembered from an earlier scan of the
    // same unchanged file (the stat key; the bytes are checked before a load):
    // no code of the library runs in this process.
    const auto key = detail::library_file_key(opened, f.opened_stat());
    std::optional<detail::CachedScan> cached = cache.lookup(key);
    // A "did not answer in time" verdict holds only up to the limit it was reached under.
    if (cached && cached->timed_out_under.count() > 0) {
      const auto limit = detail::scan_time_limit();
      if (limit > cached->timed_out_under) {
        spdlog::info(
            "plugin file {} did not answer within {} s when last scanned; scanning it again under the "
            "limit of {} s (TRAINHOOK_PLUGIN_SCAN_TIMEOUT)",
            file.string(), seconds_text(cached->timed_out_under), seconds_text(limit));
        cached.reset();
      }
    }
    if (cached) {
      from_cache = true;
      sha256 = std::move(cached->sha256);
      cached->record.path = rec.path;
      cached->record.folder = rec.folder;
      rec = std::move(cached->record);
    } else {
      sha256 = scan_with_helper(f, std::move(sha256), rec);
    }
  }
  log_verdict(rec, from_cache);
  records.push_back(std::move(rec));
  open_paths.push_back(opened);
  scanned_sha256.push_back(std::move(sha256));
  judged.emplace_back();
}

// Reads `file` with the scanner into rec (its path and folder stay) and
// remembers the verdict under the descriptor's stat key and SHA-256 (`sha256`
// when the caller took it already). The scanner loads the file only if it is
// the version opened here (its identity crosses with the path), so the
// verdict is about these bytes. Returns that SHA-256 ("" when the file cannot
// be read; rec is refused then).
std::string PluginRegistry::Impl::scan_with_helper(const detail::PluginFile& file, std::string sha256,
                                                   LibraryRecord& rec) const {
  const fs::path& opened = file.path();
  if (sha256.empty()) {
    try {
      sha256 = sha256_of(file);
    } catch (const std::runtime_error& e) {
      rec.loaded = false;
      rec.refused_reason = std::string("its SHA-256 cannot be taken: ") + e.what();
      return "";
    }
  }
  if (scanner.empty()) scanner = detail::helper_executable("trainhook-plugin-scanner");
  const auto limit = detail::scan_time_limit();
  const bool timed_out = detail::scan_in_helper(scanner, opened, file.identity(), limit, rec);
  ++scanned;
  // A loader failure (a missing dependency) depends on this process's
  // environment, not only on the file, and a file replaced before the scanner
  // opened it was not these bytes: neither is remembered.
  if (rec.refused_reason.rfind("cannot be loaded: ", 0) != 0 &&
      rec.refused_reason.rfind(detail::kNotTheJudgedFile, 0) != 0)
    cache.store(detail::library_file_key(opened, file.opened_stat()),
                {rec, sha256, timed_out ? limit : std::chrono::milliseconds(0)});
  return sha256;
}

// Before library `record` is loaded (here, by an isolated runner or by a
// foreign host): the file is opened once more, and that descriptor must hold
// the bytes its scan judged. The stat key misses a replacement that kept
// size, mtime, inode and ctime; the digest does not. A changed file is
// scanned again first, and a refusal now stops the load. The descriptor is
// kept: it is what is loaded (library()) or passed to a runner
// (pass_library()), so nothing put at the path after this check runs.
detail::PluginFile& PluginRegistry::Impl::check_unchanged(size_t record) const {
  if (judged[record]) return *judged[record];
  const LibraryRecord& rec = records[record];
  auto f = std::make_shared<detail::PluginFile>(open_paths[record]);
  if (!f->is_open())
    throw PluginError("plugin file " + rec.path.string() + " cannot be checked before it is loaded: it " +
                      f->problem());
  if (!options.allow_unsafe_plugin_paths) {
    std::string why = detail::unsafe_mode_reason(rec.path, f->opened_stat());
    if (why.empty()) why = detail::unsafe_dependency_reason(f->proc_path(), open_paths[record]);
    if (!why.empty())
      throw PluginError("plugin file " + rec.path.string() + " is refused now: unsafe plugin path: " + why +
                        " (pass --allow_unsafe_plugin_paths to load anyway)");
  }
  std::string now;
  try {
    now = sha256_of(*f);
  } catch (const std::runtime_error& e) {
    throw PluginError("plugin file " + rec.path.string() +
                      " cannot be checked before it is loaded: " + e.what());
  }
  if (now != scanned_sha256[record]) {
    spdlog::warn(
        "plugin file {} changed since it was scanned (SHA-256 {} when scanned, {} now); scanning it "
        "again before loading it",
        rec.path.string(), scanned_sha256[record].empty() ? "unknown" : scanned_sha256[record], now);
    LibraryRecord fresh;
    fresh.path = rec.path;
    fresh.folder = rec.folder;
    if (lock) fresh.refused_reason = lock->refusal(open_paths[record], now);
    std::string sha256 = fresh.refused_reason.empty() ? scan_with_helper(*f, now, fresh) : now;
    cache.save();
    log_verdict(fresh, false);
    if (!fresh.loaded)
      throw PluginError("plugin file " + rec.path.string() +
                        " changed since it was scanned and is refused now: " + fresh.refused_reason);
    scanned_sha256[record] = std::move(sha256);
  }
  judged[record] = f;
  return *f;
}

size_t PluginRegistry::Impl::record_of(const std::string& callback_name) const {
  const auto* e = find(callback_name);
  if (e == nullptr) {
    std::vector<std::string> all;
    for (const auto& [n, entry] : callbacks) all.push_back(n);
    throw PluginError(unknown_name_message("callback", callback_name, all));
  }
  return e->record;
}

std::shared_ptr<const PluginLibrary> PluginRegistry::Impl::library(size_t record) const {
  std::lock_guard<std::mutex> lock(load_mu);
  if (auto it = loaded.find(record); it != loaded.end()) return it->second;
  detail::PluginFile& file = check_unchanged(record);
  const LibraryRecord& scanned_rec = records[record];
  LibraryRecord now;
  now.path = scanned_rec.path;
  // The checked descriptor itself (dlopen("/proc/self/fd/N")): bytes put at
  // the path since, or written into the file since it was opened, never run.
  auto lib = detail::load_plugin_library(file, now);
  if (!lib)
    throw PluginError("plugin file " + scanned_rec.path.string() +
                      " was accepted when scanned but cannot be loaded now: " + now.refused_reason);
  spdlog::info("loaded plugin '{}' {} (ABI {}.{}) from {}", now.plugin_name, now.plugin_version,
               now.abi_major, now.abi_minor, scanned_rec.path.string());
  loaded.emplace(record, lib);
  return lib;
}

void PluginRegistry::Impl::resolve_duplicates() {
  // A library in an earlier folder overrides (a --plugin_dir or
  // TRAINHOOK_PLUGIN_PATH folder comes before the default one); two in the
  // same folder clash.
  std::vector<std::string> clashes;
  // Records the earlier library `winner` taking `what` from `rec`.
  auto shadow = [&](size_t winner, LibraryRecord& rec, const std::string& what, fs::path& shadowed_by,
                    bool& overridden) {
    shadowed_by = records[winner].path;
    overridden = records[winner].folder < rec.folder;
    if (overridden) {
      spdlog::info("{} from {} overrides the one in {} (found later in the plugin search path)", what,
                   records[winner].path.string(), rec.path.string());
    } else {
      clashes.push_back(what + " is exported by both " + records[winner].path.string() + " and " +
                        rec.path.string());
    }
  };
  for (size_t r = 0; r < records.size(); ++r) {
    LibraryRecord& rec = records[r];
    if (!rec.loaded) continue;
    for (size_t i = 0; i < rec.callbacks.size(); ++i) {
      const std::string& name = rec.callbacks[i].name;
      const Entry* first = find(name);
      if (first == nullptr) {
        callbacks.push_back({name, {r, i}});
        continue;
      }
      shadow(first->record, rec, "callback '" + name + "'", rec.callbacks[i].shadowed_by,
             rec.callbacks[i].overridden);
    }
    for (size_t i = 0; i < rec.commands.size(); ++i) {
      const std::string& name = rec.commands[i].name;
      auto it =
          std::find_if(commands.begin(), commands.end(), [&](const auto& e) { return e.first == name; });
      if (it == commands.end()) {
        commands.push_back({name, {r, i}});
        continue;
      }
      shadow(it->second.record, rec, "command '" + name + "'", rec.commands[i].shadowed_by,
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

const PluginRegistry::Impl::Entry* PluginRegistry::Impl::find(const std::string& name) const {
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
    if (impl_->descriptor(e).kind == kind) out.push_back(name);
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
  if (const std::string problem = report_to_list_problem(report_to); !problem.empty())
    throw PluginError("report_to: " + problem);
  for (const auto& name : report_to) {
    if (name == "none") continue;
    if (name == "all") {
      for (const auto& n : integrations) add(n);
      continue;
    }
    const auto* e = impl_->find(name);
    if (e == nullptr)
      throw PluginError("report_to: " + impl_->unknown_name_message("integration", name, integrations));
    if (impl_->descriptor(*e).kind != TH_KIND_INTEGRATION)
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
  auto library = impl_->library(e->record);
  const th_callback_info* info = detail::find_callback(*library, callback_name);
  if (info == nullptr)
    throw PluginError("plugin file " + impl_->records[e->record].path.string() +
                      " no longer exports callback '" + callback_name + "' (it did when scanned)");
  return std::make_unique<detail::PluginCallback>(std::move(library), *info, host, config_json);
}

fs::path PluginRegistry::library_of(const std::string& callback_name) const {
  const size_t record = impl_->record_of(callback_name);
  std::lock_guard<std::mutex> lock(impl_->load_mu);
  impl_->check_unchanged(record);
  return impl_->open_paths[record];
}

std::string PluginRegistry::library_sha256(const std::string& callback_name) const {
  const size_t record = impl_->record_of(callback_name);
  std::lock_guard<std::mutex> lock(impl_->load_mu);
  impl_->check_unchanged(record);
  return impl_->scanned_sha256[record];
}

PluginRegistry::PassedLibrary PluginRegistry::pass_library(const std::string& callback_name) const {
  const size_t record = impl_->record_of(callback_name);
  std::lock_guard<std::mutex> lock(impl_->load_mu);
  const detail::PluginFile& file = impl_->check_unchanged(record);
  // F_DUPFD (not _CLOEXEC): the one copy a runner started meanwhile inherits.
  const int fd = ::fcntl(file.fd(), F_DUPFD, 10);
  if (fd < 0)
    throw PluginError("plugin file " + impl_->records[record].path.string() +
                      ": cannot pass its descriptor to a helper process (" + std::strerror(errno) + ")");
  return PassedLibrary(fd);
}

PluginRegistry::PassedLibrary::~PassedLibrary() {
  if (fd_ >= 0) ::close(fd_);
}

PluginRegistry::PassedLibrary::PassedLibrary(PassedLibrary&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }

size_t PluginRegistry::scanned_count() const noexcept { return impl_->scanned; }

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
  const auto library = impl_->library(it->second.record);
  const th_command_info* info = nullptr;
  for (uint32_t i = 0; i < library->commands.size(); ++i)
    if (name == library->command_ptrs[i]->name) info = library->command_ptrs[i];
  if (info == nullptr)
    throw PluginError("plugin file " + library->path.string() + " no longer exports command '" + name +
                      "' (it did when scanned)");
  detail::HostTable bridge(host, name);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  int32_t exit_code = 0;
  char err[kErrSize];
  err[0] = '\0';
  const th_status st =
      info->run(bridge.table(), static_cast<int32_t>(args.size()), argv.data(), &exit_code, err, sizeof err);
  err[kErrSize - 1] = '\0';
  if (st != TH_OK)
    throw PluginError("command '" + name + "' (" + library->path.string() + ") failed: " +
                      (err[0] != '\0' ? err : "no message") + " [status " + std::to_string(st) + "]");
  return exit_code;
}

namespace {
std::string shadow_note(const fs::path& by, bool overridden) {
  return overridden ? "  [OVERRIDDEN by " + by.string() + ", earlier in the search path]"
                    : "  [DUPLICATE: ignored, " + by.string() + " comes first]";
}
}  // namespace

fs::path PluginRegistry::lock_file() const { return impl_->lock ? impl_->lock->file() : fs::path(); }

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
