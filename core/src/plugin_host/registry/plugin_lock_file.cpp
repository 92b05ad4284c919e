#include "plugin_lock_file.hpp"

#include "plugin_file_checks.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/sha256sum.hpp>
#include <trainhook/plugin_host/registry/plugin_lock.hpp>

#include <cstdlib>
#include <stdexcept>

namespace trainhook::detail {
namespace fs = std::filesystem;

fs::path canonical_or_normal(const fs::path& p) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : c;
}

std::optional<PluginLockFile> PluginLockFile::from_environment(const fs::path& own_dir,
                                                               bool allow_unsafe_path) {
  const char* env = std::getenv("TRAINHOOK_PLUGIN_LOCK");
  if (env == nullptr || *env == '\0') return std::nullopt;
  return PluginLockFile(env, own_dir, allow_unsafe_path);
}

PluginLockFile::PluginLockFile(const fs::path& file, const fs::path& own_dir, bool allow_unsafe_path)
    : file_(file) {
  std::error_code ec;
  if (!allow_unsafe_path && fs::exists(file, ec)) {
    if (const std::string why = unsafe_path_reason(file); !why.empty())
      throw PluginError("plugin lock file " + file.string() + " is refused: " + why +
                        "; whoever can change it decides which plugins run");
  }
  try {
    const fs::path base = fs::absolute(file).parent_path();
    for (const auto& e : read_sha256sum_file(file)) {
      const Listed listed{e.hash, file.string() + ":" + std::to_string(e.line)};
      if (e.name.find('/') == std::string::npos) {
        by_name_[e.name].push_back(listed);
      } else {
        const fs::path named = fs::path(e.name).is_absolute() ? fs::path(e.name) : base / e.name;
        by_path_[canonical_or_normal(named).string()].push_back(listed);
      }
    }
  } catch (const std::runtime_error& e) {
    throw PluginError(std::string("TRAINHOOK_PLUGIN_LOCK: ") + e.what());
  }
  if (own_dir.empty()) return;
  own_dir_ = canonical_or_normal(own_dir);
  const fs::path digests = own_dir_ / kTrainerPluginDigests;
  if (!fs::exists(digests, ec)) {
    own_problem_ = "the trainer's own plugin digests " + digests.string() +
                   " are missing (written when the trainer is built or installed)";
    return;
  }
  try {
    for (const auto& e : read_sha256sum_file(digests))
      own_[e.name] = Listed{e.hash, digests.string() + ":" + std::to_string(e.line)};
  } catch (const std::runtime_error& e) {
    own_problem_ = std::string("the trainer's own plugin digests cannot be used: ") + e.what();
  }
}

std::string PluginLockFile::refusal(const fs::path& canonical) const {
  try {
    return refusal(canonical, sha256_of_file(canonical));
  } catch (const std::runtime_error& e) {
    return std::string("pinned by ") + file_.string() + ", but " + e.what();
  }
}

std::string PluginLockFile::refusal(const fs::path& canonical, const std::string& actual) const {
  const std::string name = canonical.filename().string();
  // The site's lock decides where it names the library (by path, else by name).
  const std::vector<Listed>* site = nullptr;
  if (auto it = by_path_.find(canonical.string()); it != by_path_.end()) site = &it->second;
  if (auto it = by_name_.find(name); site == nullptr && it != by_name_.end()) site = &it->second;
  if (site != nullptr) {
    for (const auto& l : *site)
      if (l.hash == actual) return "";
    return "its SHA-256 differs from the plugin lock file: " + site->front().where + " lists " +
           site->front().hash + ", the file has " + actual;
  }
  const bool in_own_dir = !own_dir_.empty() && canonical.parent_path() == own_dir_;
  if (in_own_dir) {
    if (auto it = own_.find(name); it != own_.end()) {
      if (it->second.hash == actual) return "";
      return "its SHA-256 differs from the trainer's own plugin digests: " + it->second.where + " lists " +
             it->second.hash + ", the file has " + actual + " (reinstall the trainer, or list it in " +
             file_.string() + ")";
    }
  }
  std::string why = "not listed in the plugin lock file " + file_.string() +
                    " (TRAINHOOK_PLUGIN_LOCK); its SHA-256 is " + actual + " (add the line '" + actual +
                    "  " + name + "' to allow it: `trainhook plugins lock " + canonical.string() + " >> " +
                    file_.string() + "`)";
  if (in_own_dir)
    why += "; " + (own_problem_.empty() ? "the trainer's own plugin digests do not list it" : own_problem_);
  return why;
}

}  // namespace trainhook::detail
