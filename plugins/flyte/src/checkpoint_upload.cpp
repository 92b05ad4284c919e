#include <trainhook/flyte/checkpoint_upload.hpp>
#include <trainhook/flyte/manifest.hpp>

#include <fstream>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;

fs::path stage_checkpoint(const fs::path& checkpoint_dir, StagingFolders& staging,
                          const support::Logger& log) {
  std::error_code ec;
  const fs::path staged = staging.take(ec);
  fs::recursive_directory_iterator it;
  if (!ec) it = fs::recursive_directory_iterator(checkpoint_dir, ec);
  const fs::recursive_directory_iterator end;
  for (; !ec && it != end; it.increment(ec)) {
    // Lexical: the iterator's paths all start with checkpoint_dir (fs::relative
    // would resolve both paths, a readlink per component, on the training thread).
    const fs::path target = staged / it->path().lexically_relative(checkpoint_dir);
    if (it->is_directory())
      fs::create_directories(target, ec);
    else if (it->is_regular_file())
      fs::create_hard_link(it->path(), target, ec);
  }
  if (ec) {
    log(LogLevel::debug, "cannot hard-link " + checkpoint_dir.string() + " for upload (" + ec.message() +
                             "); uploading from the folder itself");
    if (!staged.empty()) staging.give_back(staged);
    return checkpoint_dir;
  }
  return staged;
}

void upload_checkpoint(Store& store, const fs::path& dir, const std::string& name,
                       const fs::path& manifest_scratch, const support::RetryPolicy& retry,
                       const Cancellation& cancel, const support::Logger& log) {
  const Manifest manifest = Manifest::build(dir, name);
  for (const auto& f : manifest.files) {
    const std::string key = name + "/" + f.path;
    with_retries(retry, cancel, log, "upload of " + key + " to " + store.describe(),
                 [&] { store.put_file(dir / f.path, key); });
  }
  {
    std::error_code ec;
    fs::create_directories(manifest_scratch.parent_path(), ec);
    std::ofstream out(manifest_scratch, std::ios::binary | std::ios::trunc);
    out << manifest.to_json();
    if (!out.flush())
      throw std::runtime_error("cannot write manifest scratch file '" + manifest_scratch.string() + "'");
  }
  const std::string key = name + "/" + kManifestName;
  with_retries(retry, cancel, log, "upload of " + key + " to " + store.describe(),
               [&] { store.put_file(manifest_scratch, key); });
  std::error_code ignored;
  fs::remove(manifest_scratch, ignored);
}

}  // namespace trainhook::flyte
