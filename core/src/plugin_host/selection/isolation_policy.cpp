// The isolation decision (trainhook/plugin_host/selection/isolation_policy.hpp).
#include <trainhook/plugin_host/selection/isolation_policy.hpp>

#include "../registry/plugin_lock_file.hpp"

#include <trainhook/common/errors.hpp>

#include <algorithm>
#include <utility>

namespace trainhook {
namespace fs = std::filesystem;
using detail::canonical_or_normal;

namespace {

// True when `file` is inside `dir` or one of its subfolders (both canonical).
bool is_under(const fs::path& file, const fs::path& dir) {
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (d->empty()) continue;  // a trailing separator
    if (f == file.end() || *f != *d) return false;
  }
  return f != file.end();
}

}  // namespace

IsolationPolicy::IsolationPolicy(const std::vector<std::string>& flag, SiteConfig site,
                                 const fs::path& own_dir, fs::path lock_file)
    : site_(std::move(site)), own_dir_(canonical_or_normal(own_dir)), lock_file_(std::move(lock_file)) {
  for (const auto& d : site_.trusted_plugin_dirs) trusted_dirs_.push_back(canonical_or_normal(d));
  if (!site_.plugin_lock.empty())
    site_lock_ = std::make_shared<const detail::PluginLockFile>(site_.plugin_lock, own_dir_);
  bool saw_auto = false;
  bool saw_none = false;
  for (const auto& v : flag) {
    if (v == "auto")
      saw_auto = true;
    else if (v == "none")
      saw_none = true;
    else
      names_.push_back(v);
  }
  if (saw_none && (saw_auto || !names_.empty()))
    throw ArgumentError(
        "--plugin_isolation: 'none' (every plugin in process) cannot be combined with other values; "
        "expected auto, none, or callback names (optionally after auto)");
  if (!flag.empty()) {
    mode_ = saw_none ? IsolationMode::none : (saw_auto ? IsolationMode::automatic : IsolationMode::named);
    mode_source_ = "--plugin_isolation";
  } else if (!site_.plugin_isolation.empty()) {
    mode_ = site_.plugin_isolation == "none" ? IsolationMode::none : IsolationMode::automatic;
    mode_source_ = "site file " + site_.file.string();
  } else {
    mode_source_ = "the default";
  }
}

std::string IsolationPolicy::describe_mode() const {
  const char* word = mode_ == IsolationMode::none        ? "none"
                     : mode_ == IsolationMode::automatic ? "auto"
                                                         : "named";
  return std::string(word) + " (" + mode_source_ + ")";
}

PluginTrust IsolationPolicy::trust_of(const fs::path& library, const std::string& sha256) const {
  const fs::path file = canonical_or_normal(library);
  if (file.parent_path() == own_dir_) return PluginTrust::own_folder;
  for (const auto& d : trusted_dirs_)
    if (is_under(file, d)) return PluginTrust::trusted_folder;
  if (!lock_file_.empty()) return PluginTrust::pinned;
  // The registry loads the bytes whose digest it gave (their descriptor), or
  // refuses: a library swapped after this decision never runs in process.
  if (site_lock_ && (sha256.empty() ? site_lock_->refusal(file) : site_lock_->refusal(file, sha256)).empty())
    return PluginTrust::pinned;
  return PluginTrust::untrusted;
}

IsolationDecision IsolationPolicy::decide(const std::string& callback, const fs::path& library,
                                          const std::string& sha256) const {
  IsolationDecision d;
  d.trust = trust_of(library, sha256);
  const bool named = std::find(names_.begin(), names_.end(), callback) != names_.end();
  if (mode_ == IsolationMode::none) {
    d.why = "plugin_isolation none (" + mode_source_ + ")";
    return d;
  }
  if (named) {
    d.isolated = true;
    d.named = true;
    d.why = "named in --plugin_isolation";
    return d;
  }
  if (mode_ == IsolationMode::named) {
    d.why = "not named in --plugin_isolation";
    return d;
  }
  d.by_trust = true;
  switch (d.trust) {
    case PluginTrust::own_folder:
      d.why = "the trainer's own plugin folder";
      break;
    case PluginTrust::trusted_folder:
      d.why = "a trusted folder of site file " + site_.file.string();
      break;
    case PluginTrust::pinned:
      d.why = "pinned in " + (lock_file_.empty() ? site_.plugin_lock : lock_file_).string();
      break;
    case PluginTrust::untrusted:
      d.isolated = true;
      d.why = "not trusted: outside the trainer's plugin folder and the site's trusted folders, not pinned";
      break;
  }
  return d;
}

std::string IsolationPolicy::how_to_trust(const std::string& callback, const fs::path& library) const {
  const std::string site =
      site_.file.empty() ? default_site_config_path().string() + " (or $" + std::string(kSiteConfigEnv) + ")"
                         : site_.file.string();
  return "to run '" + callback + "' in process, trust it: add " + library.parent_path().string() +
         " to trusted_plugin_dirs in the site file " + site + ", or pin it in the site's lock file (" +
         "`trainhook plugins lock " + library.string() +
         "` prints its line; plugin_lock in the site file or TRAINHOOK_PLUGIN_LOCK), or pass "
         "--plugin_config " +
         callback + ".isolation=in_process or --plugin_isolation none";
}

}  // namespace trainhook
