#include "plugin_lock_file.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>

#include <cstdlib>
#include <stdexcept>

namespace trainhook::detail {
namespace fs = std::filesystem;

std::optional<PluginLockFile> PluginLockFile::from_environment() {
  const char* env = std::getenv("TRAINHOOK_PLUGIN_LOCK");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return PluginLockFile(env);
}

PluginLockFile::PluginLockFile(const fs::path& file) : file_(file) {
  try {
    const fs::path base = fs::absolute(file).parent_path();
    for (const auto& e : read_sha256sum_file(file)) {
      const fs::path named = fs::path(e.name).is_absolute() ? fs::path(e.name) : base / e.name;
      std::error_code ec;
      const fs::path canonical = fs::weakly_canonical(named, ec);
      digests_[(ec ? named.lexically_normal() : canonical).string()] = {e.hash, e.line};
    }
  } catch (const std::runtime_error& e) {
    throw PluginError(std::string("TRAINHOOK_PLUGIN_LOCK: ") + e.what());
  }
}

std::string PluginLockFile::refusal(const fs::path& canonical) const {
  std::string actual;
  try {
    actual = sha256_of_file(canonical);
  } catch (const std::runtime_error& e) {
    return std::string("pinned by ") + file_.string() + ", but " + e.what();
  }
  const auto it = digests_.find(canonical.string());
  if (it == digests_.end())
    return "not listed in the plugin lock file " + file_.string() +
           " (TRAINHOOK_PLUGIN_LOCK); its SHA-256 is " + actual + " (add the line '" + actual + "  " +
           canonical.string() + "' to allow it)";
  if (it->second.first != actual)
    return "its SHA-256 differs from the plugin lock file: " + file_.string() + ":" +
           std::to_string(it->second.second) + " lists " + it->second.first + ", the file has " + actual;
  return "";
}

}  // namespace trainhook::detail
