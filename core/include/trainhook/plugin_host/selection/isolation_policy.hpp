// Which plugin callbacks run in the trainer's process and which each in a
// helper process (plugin_host/isolation/isolation.hpp), and why. Decided once
// at setup from --plugin_isolation and the site file (site_config.hpp), never
// per event. The modes:
//   auto   (the default) a library in the trainer's own plugin folder, under a
//          site trusted_plugin_dirs folder, pinned in the site's plugin_lock
//          (its digest matches), or accepted under TRAINHOOK_PLUGIN_LOCK (which
//          refuses the unlisted) runs in process; every other library is isolated;
//   none   everything in process;
//   NAMES  the named callbacks isolated, the rest in process (names may also
//          follow auto: those are isolated, the rest by trust).
// A callback's plugin_config "isolation" key still wins over auto and none
// (plugin_isolation_of applies it). No LibTorch here.
#pragma once

#include <trainhook/plugin_host/selection/site_config.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace trainhook {
namespace detail {
class PluginLockFile;
}

enum class IsolationMode { automatic, none, named };

// Why a library is trusted to run in process under auto (untrusted: isolated).
enum class PluginTrust { own_folder, trusted_folder, pinned, untrusted };

struct IsolationDecision {
  bool isolated = false;
  PluginTrust trust = PluginTrust::untrusted;
  bool by_trust = false;  // decided by auto's trust rule (not a name, not none)
  bool named = false;     // named in --plugin_isolation (a plugin_config key cannot undo it)
  std::string why;        // "the trainer's own plugin folder", ...: for logs and listings
};

class IsolationPolicy {
 public:
  // flag: --plugin_isolation as given (empty: the site's mode, else auto).
  // own_dir: the trainer's own plugin folder. lock_file: the lock the
  // registry applied, TRAINHOOK_PLUGIN_LOCK (empty: none); with one in force
  // the registry refuses every library neither the trainer's own nor listed
  // with its digest, so a library it accepted outside the own folder is
  // pinned. The site's plugin_lock is read here (PluginError naming it when
  // it cannot be, or when others could change it: plugin_lock_file.hpp). Throws ArgumentError for none
  // combined with anything else.
  IsolationPolicy(const std::vector<std::string>& flag, SiteConfig site, const std::filesystem::path& own_dir,
                  std::filesystem::path lock_file);

  IsolationMode mode() const noexcept { return mode_; }
  // "auto (the default)", "none (--plugin_isolation)", "auto (site file F)", ...
  std::string describe_mode() const;

  // `sha256`: the digest of the bytes that will be loaded, taken by the
  // registry from the descriptor it loads (PluginRegistry::library_sha256),
  // so a pin by the site's plugin_lock is judged on those bytes; empty: the
  // file's current bytes (a listing, which loads nothing).
  PluginTrust trust_of(const std::filesystem::path& library, const std::string& sha256 = {}) const;
  // `library`: the file providing `callback`; `sha256` as for trust_of.
  IsolationDecision decide(const std::string& callback, const std::filesystem::path& library,
                           const std::string& sha256 = {}) const;
  // What a user can do to run `callback` (of `library`) in process: for the
  // messages about an untrusted plugin.
  std::string how_to_trust(const std::string& callback, const std::filesystem::path& library) const;

 private:
  IsolationMode mode_ = IsolationMode::automatic;
  std::string mode_source_;
  std::vector<std::string> names_;
  SiteConfig site_;
  std::filesystem::path own_dir_;  // canonical when it exists
  std::vector<std::filesystem::path> trusted_dirs_;
  std::filesystem::path lock_file_;
  std::shared_ptr<const detail::PluginLockFile> site_lock_;  // the site's plugin_lock; null: none
};

}  // namespace trainhook
