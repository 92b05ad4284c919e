// Discovers plugin libraries (file names as in plugin_file_name.hpp) and
// learns what each exports without running its code in this process: a helper
// process (trainhook-plugin-scanner) loads each library that the registry
// cache does not already know (plugin_scan.hpp, registry_cache.hpp), so a
// library that crashes, hangs or exits while loading is recorded as refused
// and harms nobody. A library is loaded into this process only when a run
// creates one of its callbacks or runs one of its commands. No LibTorch here.
//
// Lifetime: each created callback holds a shared reference to its library, so
// a library is unloaded only after every callback it made is destroyed.
#pragma once

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/common/errors.hpp>
#include <trainhook/plugin_host/host/host_services.hpp>
#include <trainhook/plugin_host/registry/library_record.hpp>
#include <trainhook/plugin_host/registry/plugin_search.hpp>

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace trainhook {

class PluginRegistry {
 public:
  // Scans the search path (see the top of this file; TRAINHOOK_PLUGIN_LOCK
  // pins the allowed files). Refused files are recorded, not thrown; a name
  // exported twice in one folder throws PluginError naming both libraries
  // unless allowed (across folders the earlier one overrides).
  explicit PluginRegistry(const PluginSearchOptions& options);
  ~PluginRegistry();
  PluginRegistry(PluginRegistry&&) noexcept;
  PluginRegistry& operator=(PluginRegistry&&) noexcept;

  const std::vector<LibraryRecord>& libraries() const noexcept;
  std::vector<std::string> searched_dirs() const;
  // The lock file in force (TRAINHOOK_PLUGIN_LOCK); empty: none. With one,
  // every library accepted outside the trainer's own folder is listed in it
  // with its current digest.
  std::filesystem::path lock_file() const;
  // Names of loaded callbacks of a kind (TH_KIND_*), in search order.
  std::vector<std::string> available(int32_t kind) const;
  bool has(const std::string& callback_name) const;

  // report_to: "none", "all", or names of integrations. Throws PluginError for
  // an unknown name, listing the available integrations, the closest name and
  // the folders searched.
  std::vector<std::string> resolve_report_to(const std::vector<std::string>& report_to) const;
  // `callbacks`: names of any kind; same errors.
  void check_callbacks(const std::vector<std::string>& names) const;

  // The library file (canonical path) that provides `callback_name`, for a
  // host that loads it in another process. Throws PluginError for an unknown
  // name. Like create(), it first checks that the file still holds the bytes
  // the scan judged (SHA-256): a changed file is scanned again, and one that is
  // refused now throws PluginError naming the file and the reason.
  std::filesystem::path library_of(const std::string& callback_name) const;
  // The SHA-256 of the bytes library_of() checked: the bytes create() loads
  // (it loads the descriptor it checked) and pass_library() passes, so a pin
  // judged on this digest (the site's plugin_lock) holds for what runs.
  std::string library_sha256(const std::string& callback_name) const;

  // An inheritable copy (not close-on-exec) of the descriptor library_of()
  // checked, open while this object lives: a trainhook-plugin-runner started
  // meanwhile for this library loads it (load_passed_plugin_library) instead
  // of opening the path again, so it runs the checked bytes too. Keep it until
  // the runner has loaded the library (make_isolated_callback has returned).
  class PassedLibrary {
   public:
    explicit PassedLibrary(int fd) noexcept : fd_(fd) {}
    ~PassedLibrary();
    PassedLibrary(PassedLibrary&& o) noexcept;
    PassedLibrary(const PassedLibrary&) = delete;
    PassedLibrary& operator=(const PassedLibrary&) = delete;
    PassedLibrary& operator=(PassedLibrary&&) = delete;

   private:
    int fd_;
  };
  PassedLibrary pass_library(const std::string& callback_name) const;
  // How many libraries this registry read with the scanner (the rest came
  // from the registry cache), including any scanned again before a load.
  size_t scanned_count() const noexcept;

  // Loads the callback's library into this process on first use (only enabled
  // callbacks' libraries are ever loaded) and creates an instance; `host` must outlive it. config_json is its
  // section of plugin_config ("{}" when none). Throws PluginError with the plugin's message. Before
  // loading, the file's SHA-256 is compared with the scanned bytes' (see library_of).
  std::unique_ptr<detail::InternalCallback> create(const std::string& callback_name, HostServices& host,
                                                   const std::string& config_json) const;

  // Human-readable listing for `trainhook plugins`.
  std::string describe() const;

  // Plugin CLI subcommands (th_command_info), in search order.
  std::vector<std::string> command_names() const;
  bool has_command(const std::string& name) const;
  // Runs `trainhook <name> args...` on this thread with a th_host over `host`;
  // returns the command's exit code. Throws PluginError for an unknown name
  // (with the closest one) or when the command reports an error.
  int run_command(const std::string& name, const std::vector<std::string>& args, HostServices& host) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainhook
