// plugins.lock: the plugin files a site allows, with their SHA-256, in
// sha256sum's format (`sha256sum /opt/trainhook/plugins/*.so > plugins.lock`
// writes one). TRAINHOOK_PLUGIN_LOCK names it; with it set, a library that is
// not listed, or whose bytes differ from the listed digest, is refused before
// anything reads or runs it, naming both digests (as pip's --require-hashes).
// Names are absolute paths or relative to the lock file's folder; both sides
// are compared as canonical paths, so a symlinked plugin folder matches.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace trainhook::detail {

class PluginLockFile {
 public:
  // nullopt when TRAINHOOK_PLUGIN_LOCK is unset or empty. Throws PluginError
  // naming the file (and line) when it cannot be read or a line is malformed.
  static std::optional<PluginLockFile> from_environment();
  explicit PluginLockFile(const std::filesystem::path& file);

  // "" when `canonical` is listed with its current digest; else why not.
  std::string refusal(const std::filesystem::path& canonical) const;
  const std::filesystem::path& file() const noexcept { return file_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, std::pair<std::string, int>> digests_;  // canonical path -> (hash, line)
};

}  // namespace trainhook::detail
