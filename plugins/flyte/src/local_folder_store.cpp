#include <trainhook/flyte/local_folder_store.hpp>
#include <trainhook/strings.hpp>

#include <atomic>
#include <system_error>

namespace trainhook::flyte {
namespace fs = std::filesystem;
namespace {

using strings::ends_with;

// Copies src to dst through a temporary sibling + rename. Every failure is
// retryable: a mounted folder may come back (read-only, full, unmounted).
void copy_atomically(const fs::path& src, const fs::path& dst, const std::string& what) {
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  fs::create_directories(dst.parent_path(), ec);
  if (ec)
    throw StoreError(what + ": cannot create folder '" + dst.parent_path().string() + "': " + ec.message(),
                     true);
  fs::path tmp = dst;
  tmp += "." + std::to_string(counter.fetch_add(1)) + kTempSuffix;
  fs::copy_file(src, tmp, fs::copy_options::overwrite_existing, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw StoreError(what + ": cannot copy '" + src.string() + "' to '" + dst.string() + "': " + ec.message(),
                     fs::exists(src));
  }
  fs::rename(tmp, dst, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw StoreError(what + ": cannot rename into '" + dst.string() + "': " + ec.message(), true);
  }
}

}  // namespace

LocalFolderStore::LocalFolderStore(fs::path root) : root_(std::move(root)) {}

std::vector<ObjectInfo> LocalFolderStore::list(const std::string& key_prefix) {
  std::vector<ObjectInfo> out;
  std::error_code ec;
  if (!fs::exists(root_, ec)) return out;  // an empty prefix, as in S3
  fs::recursive_directory_iterator it(root_, ec), end;
  if (ec) throw StoreError("cannot list '" + root_.string() + "': " + ec.message(), true);
  for (; it != end; it.increment(ec)) {
    if (ec) throw StoreError("cannot list '" + root_.string() + "': " + ec.message(), true);
    if (!it->is_regular_file()) continue;
    const std::string key = fs::relative(it->path(), root_).generic_string();
    if (ends_with(key, kTempSuffix) || key.compare(0, key_prefix.size(), key_prefix) != 0) continue;
    out.push_back({key, static_cast<uint64_t>(it->file_size())});
  }
  return out;
}

void LocalFolderStore::put_file(const fs::path& file, const std::string& key) {
  // A missing source is not retryable (the checkpoint was deleted); the rest is.
  if (!fs::exists(file)) throw StoreError("upload of '" + file.string() + "': the file is gone", false);
  copy_atomically(file, root_ / key, "upload to " + root_.string());
}

void LocalFolderStore::get_file(const std::string& key, const fs::path& file) {
  const fs::path src = root_ / key;
  if (!fs::exists(src)) throw StoreError("download: '" + src.string() + "' does not exist", false);
  copy_atomically(src, file, "download from " + root_.string());
}

}  // namespace trainhook::flyte
