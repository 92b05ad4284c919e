// The site's plugin settings, so users need no flags: a JSON file
// ($TRAINHOOK_SITE_CONFIG, else <prefix>/etc/trainhook/site.json, the prefix
// found relative to the running executable as the plugin folder is) with the
// default isolation mode, the folders whose plugins the site trusts to run in
// process, and a lock file of libraries it trusts likewise (pinned by digest:
// under auto they run in process, unlisted ones isolated; unlike
// TRAINHOOK_PLUGIN_LOCK, it refuses nothing). Read once at setup, by the
// trainer and by `trainhook plugins`; the command line wins over it.
// isolation_policy.hpp turns it into a decision per plugin. No LibTorch here.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainhook {

inline constexpr const char* kSiteConfigEnv = "TRAINHOOK_SITE_CONFIG";

struct SiteConfig {
  std::filesystem::path file;    // the file read; empty: no site file
  std::string plugin_isolation;  // "auto" | "none"; empty: not set (auto)
  // Absolute, normalised (relative ones are resolved against the file's folder).
  std::vector<std::filesystem::path> trusted_plugin_dirs;
  std::filesystem::path plugin_lock;  // as trusted_plugin_dirs; empty: not set
};

// <dir of the running executable>/../etc/trainhook/site.json.
std::filesystem::path default_site_config_path();

// Reads `file`. Throws ArgumentError naming the file (and the key) when it
// cannot be read, is not a JSON object, has a key other than plugin_isolation,
// trusted_plugin_dirs and plugin_lock, or a value of the wrong type; and when
// others could change it: like a plugin path (and its plugin_lock file), it
// must be owned by you or root and writable by nobody else, nor any folder
// above it (the message names the file, the bit and the fix, "chmod g-w F").
SiteConfig read_site_config(const std::filesystem::path& file);

// $TRAINHOOK_SITE_CONFIG (which must exist when set), else the default path
// when that file exists, else an empty SiteConfig.
SiteConfig load_site_config();

}  // namespace trainhook
