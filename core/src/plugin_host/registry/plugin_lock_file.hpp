// The lock the registry applies when TRAINHOOK_PLUGIN_LOCK names a file: the
// plugin files a site allows, with their SHA-256, in sha256sum's format
// (`trainhook plugins lock` prints such lines). With it set, a library that is
// neither listed there nor one of the trainer's own plugins (its folder's
// trainhook-plugins.sha256, see trainhook/plugin_host/registry/plugin_lock.hpp), or whose
// bytes differ from the listed digest, is refused before anything reads or runs
// it, naming both digests (as pip's --require-hashes). A name without '/' is
// matched as a file name in any searched folder; a name with '/' is a path,
// absolute or relative to the lock file's folder, compared as canonical paths
// (a symlinked plugin folder matches). Where the site's lock names a library,
// it decides; the trainer's own digests decide only for the others.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainhook::detail {

// The path as the lock compares paths: canonical (symlinks resolved) where it
// can be, else only normalised. The isolation policy compares trusted folders
// the same way.
std::filesystem::path canonical_or_normal(const std::filesystem::path& p);

class PluginLockFile {
 public:
  // nullopt when TRAINHOOK_PLUGIN_LOCK is unset or empty. `own_dir` is the
  // trainer's own plugin folder (the search path's default folder); empty:
  // no library counts as the trainer's own. Throws PluginError naming the
  // file (and line) when the lock cannot be read or a line is malformed, and,
  // unless `allow_unsafe_path`, when the lock file decides nothing because
  // others could write it: it follows the rule plugin paths follow
  // (plugin_file_checks.hpp: owned by you or root, writable by nobody else,
  // nor any folder above it), and the error names the file, the bit and the fix.
  static std::optional<PluginLockFile> from_environment(const std::filesystem::path& own_dir = {},
                                                        bool allow_unsafe_path = false);
  explicit PluginLockFile(const std::filesystem::path& file, const std::filesystem::path& own_dir = {},
                          bool allow_unsafe_path = false);

  // "" when `canonical`, whose bytes have the SHA-256 `sha256` (taken by the
  // caller from the descriptor it loads), is allowed; else why not.
  std::string refusal(const std::filesystem::path& canonical, const std::string& sha256) const;
  // The same for the file's current bytes at `canonical` (a listing's view).
  std::string refusal(const std::filesystem::path& canonical) const;
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  struct Listed {
    std::string hash;
    std::string where;  // "<file>:<line>", for messages
  };
  std::filesystem::path file_;
  std::map<std::string, std::vector<Listed>> by_path_;  // canonical path -> lines naming it
  std::map<std::string, std::vector<Listed>> by_name_;  // file name -> lines naming it
  std::filesystem::path own_dir_;                       // canonical; empty: none
  std::map<std::string, Listed> own_;                   // the trainer's digests, by file name
  std::string own_problem_;                             // why they could not be read
};

}  // namespace trainhook::detail
