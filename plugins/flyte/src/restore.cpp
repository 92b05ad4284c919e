#include <trainhook/flyte/local_folder_store.hpp>
#include <trainhook/flyte/manifest.hpp>
#include <trainhook/flyte/restore.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;
namespace {

struct Candidate {
  std::string name;
  int64_t step = 0;
  std::map<std::string, uint64_t> sizes;  // relative path -> size listed in the store
};

// Removes the staging folder however restore_one ends (after a successful
// install it no longer exists).
struct RemoveOnExit {
  fs::path dir;
  ~RemoveOnExit() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Downloads, verifies and installs one checkpoint; returns the problem if any.
std::optional<std::string> restore_one(Store& prev, const Candidate& c, const fs::path& output_dir,
                                       const support::RetryPolicy& retry, const Cancellation& cancel,
                                       const support::Logger& log) {
  const fs::path staging = output_dir / (".trainhook-restore-" + c.name);
  std::error_code ec;
  fs::remove_all(staging, ec);
  RemoveOnExit guard{staging};
  const fs::path manifest_file = staging / kManifestName;
  with_retries(retry, cancel, log, "download of " + c.name + "/" + kManifestName,
               [&] { prev.get_file(c.name + "/" + kManifestName, manifest_file); });
  Manifest m;
  try {
    m = Manifest::parse(read_file(manifest_file), prev.describe() + "/" + c.name + "/" + kManifestName);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  // Cheap checks on the listing before any download.
  for (const auto& f : m.files) {
    auto it = c.sizes.find(f.path);
    if (it == c.sizes.end()) return "'" + f.path + "' listed in the manifest is not in the store";
    if (it->second != f.size)
      return "'" + f.path + "' has " + std::to_string(it->second) +
             " bytes in the store, the manifest says " + std::to_string(f.size);
  }
  const fs::path target = output_dir / c.name;
  if (fs::exists(target) && !m.verify(target)) {
    log(LogLevel::info, c.name + " is already in " + output_dir.string() + " and matches its manifest");
    return std::nullopt;
  }
  for (const auto& f : m.files)
    with_retries(retry, cancel, log, "download of " + c.name + "/" + f.path,
                 [&] { prev.get_file(c.name + "/" + f.path, staging / f.path); });
  if (auto problem = m.verify(staging)) return problem;
  // Install: the old local copy (which did not match) goes, the verified one takes its place.
  fs::remove_all(target, ec);
  fs::rename(staging, target, ec);
  if (ec)
    throw StoreError(
        "cannot move the restored " + c.name + " into '" + target.string() + "': " + ec.message(), false);
  return std::nullopt;
}

}  // namespace

RestoreResult restore_checkpoints(Store& prev, const fs::path& output_dir, bool all,
                                  const support::RetryPolicy& retry, const Cancellation& cancel,
                                  const support::Logger& log) {
  RestoreResult result;
  std::vector<ObjectInfo> objects;
  with_retries(retry, cancel, log, "listing " + prev.describe(), [&] { objects = prev.list(""); });

  std::map<std::string, Candidate> by_name;
  std::map<std::string, bool> has_manifest;
  size_t other = 0;
  for (const auto& o : objects) {
    const auto slash = o.key.find('/');
    const std::string top = o.key.substr(0, slash);
    const auto step = checkpoint_step(top);
    if (slash == std::string::npos || !step) {
      ++other;
      continue;
    }
    auto& c = by_name[top];
    c.name = top;
    c.step = *step;
    const std::string rel = o.key.substr(slash + 1);
    if (rel == kManifestName)
      has_manifest[top] = true;
    else
      c.sizes[rel] = o.size;
  }
  std::vector<Candidate> candidates;
  for (auto& [name, c] : by_name) candidates.push_back(std::move(c));
  std::sort(candidates.begin(), candidates.end(), [](auto& a, auto& b) { return a.step > b.step; });
  if (other > 0)
    log(LogLevel::debug,
        std::to_string(other) + " object(s) in " + prev.describe() + " are not checkpoints; ignored");

  std::error_code ec;
  fs::create_directories(output_dir, ec);
  for (const auto& c : candidates) {
    if (result.resume_from && !all) break;
    std::optional<std::string> problem;
    if (!has_manifest[c.name])
      problem = "no manifest (partial upload)";
    else {
      try {
        problem = restore_one(prev, c, output_dir, retry, cancel, log);
      } catch (const StoreError& e) {
        problem = e.what();
      }
    }
    if (problem) {
      log(LogLevel::warn, "skipping " + c.name + " from " + prev.describe() + ": " + *problem);
      result.skipped.push_back(c.name + ": " + *problem);
      continue;
    }
    result.restored.push_back(c.name);
    if (!result.resume_from) result.resume_from = output_dir / c.name;
  }
  return result;
}

}  // namespace trainhook::flyte
