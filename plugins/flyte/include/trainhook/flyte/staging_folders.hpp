// The folders under output_dir/.trainhook-upload-staging that hold a
// checkpoint's hard links while it uploads (so the trainer may delete the
// checkpoint, save_total_limit, mid-upload).
//
// A folder emptied after its upload is kept for a later save. on_save runs on
// the training thread, and there making a folder (an inode allocation: on ext4
// it searches the inode bitmap past recently deleted inodes) costs more than
// linking the checkpoint's files. With spares made at run start, saves only
// link. Shared by the callback (take) and the upload worker (give_back).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <vector>

namespace trainhook::flyte {

class StagingFolders {
 public:
  // keep: the spare folders kept for later saves (a save takes one; its
  // upload's cleanup gives it back).
  explicit StagingFolders(std::filesystem::path root, size_t keep = 2);
  // Removes the spares, and the root when nothing else is in it.
  ~StagingFolders();
  StagingFolders(const StagingFolders&) = delete;
  StagingFolders& operator=(const StagingFolders&) = delete;

  // Makes spares until `keep` exist (at run start: before the first save).
  // A failure is left for take() to meet and report.
  void prepare() noexcept;
  // An empty folder to link a checkpoint into: a spare, else a new one. On
  // failure, ec is set and the path is empty.
  std::filesystem::path take(std::error_code& ec);
  // Empties `folder` and keeps it as a spare (up to `keep`); else, or when it
  // cannot be emptied, removes it. Never throws.
  void give_back(const std::filesystem::path& folder) noexcept;
  // Removes the spares and the root when empty (at run end).
  void clear() noexcept;

  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path make_folder(std::error_code& ec);  // with mu_ held

  const std::filesystem::path root_;
  const size_t keep_;
  std::mutex mu_;
  std::vector<std::filesystem::path> spares_;
  uint64_t made_ = 0;  // names the next folder: "upload-<made_>"
};

}  // namespace trainhook::flyte
