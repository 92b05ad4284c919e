#include <trainhook/flyte/staging_folders.hpp>

#include <unistd.h>

#include <string>
#include <utility>

namespace trainhook::flyte {
namespace fs = std::filesystem;

StagingFolders::StagingFolders(fs::path root, size_t keep) : root_(std::move(root)), keep_(keep) {}

StagingFolders::~StagingFolders() { clear(); }

fs::path StagingFolders::make_folder(std::error_code& ec) {
  fs::create_directories(root_, ec);
  if (ec) return {};
  // A folder left by an earlier process in the same output_dir is skipped,
  // not reused: it may still hold that run's links.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const fs::path folder = root_ / ("upload-" + std::to_string(::getpid()) + "-" + std::to_string(made_++));
    if (fs::create_directory(folder, ec)) return folder;
    if (ec) return {};
  }
  ec = std::make_error_code(std::errc::file_exists);
  return {};
}

void StagingFolders::prepare() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  while (spares_.size() < keep_) {
    std::error_code ec;
    fs::path folder = make_folder(ec);
    if (ec) return;
    spares_.push_back(std::move(folder));
  }
}

fs::path StagingFolders::take(std::error_code& ec) {
  ec.clear();
  std::lock_guard<std::mutex> lock(mu_);
  if (!spares_.empty()) {
    fs::path folder = std::move(spares_.back());
    spares_.pop_back();
    return folder;
  }
  return make_folder(ec);
}

void StagingFolders::give_back(const fs::path& folder) noexcept {
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec))
    fs::remove_all(it->path(), ec);
  if (!ec) {
    std::lock_guard<std::mutex> lock(mu_);
    if (spares_.size() < keep_) {
      spares_.push_back(folder);
      return;
    }
  }
  fs::remove_all(folder, ec);
}

void StagingFolders::clear() noexcept {
  std::vector<fs::path> spares;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spares.swap(spares_);
  }
  std::error_code ec;
  for (const fs::path& folder : spares) fs::remove_all(folder, ec);
  fs::remove(root_, ec);  // only when empty
}

}  // namespace trainhook::flyte
