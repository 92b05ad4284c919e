// WANDB_LOG_MODEL: uploading checkpoint / model folders through the files
// endpoint of our W&B-style protocol (docs/wandb_protocol.md):
//
//   PUT <base>/files/<entity>/<project>/<run_id>/artifacts/<name>/<relative path>
//   body: the file's bytes (application/octet-stream), streamed from disk
//
// ModelUploader holds the folders still to upload and sends one file per call
// (upload_once), so the worker thread can interleave history requests and
// new records between files. Retried failures keep the file at the head of
// the queue; a final refusal (W&B's never-retry statuses) gives up that one
// folder. The file list of a folder is taken when its first file is sent
// (checkpoints are complete when on_save fires); a folder deleted before that
// (save_total_limit rotation) is skipped with a message.
//
// Not thread-safe: it lives on the uploader's worker thread.
#pragma once

#include <trainhook/wandb/file_stream.hpp>

#include <trainhook/support/http_client.hpp>
#include <trainhook/support/retry.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <string>
#include <vector>

namespace trainhook::wandb {

// One folder to upload as the artifact `name` (e.g. "checkpoint-500", "model").
struct ArtifactUpload {
  std::string name;
  std::filesystem::path dir;
};

// <base>/files/<entity>/<project>/<run>/artifacts/<name>/<relative path>, every
// segment URL-encoded ('/' kept between the relative path's folders).
std::string artifact_file_url(const StreamTarget& target, const std::string& name,
                              const std::string& relative_path);

enum class UploadStatus {
  nothing_to_send,
  uploaded,  // one file stored; `finished` is set when it was its folder's last
  skipped,   // a folder (or one file of it) vanished from disk; `message` says which
  retry,     // not stored; try again after retry_in (the same file)
  fatal,     // refused for good: the folder `finished` is given up; `message` says why
};

struct UploadResult {
  UploadStatus status = UploadStatus::nothing_to_send;
  std::chrono::milliseconds retry_in{0};
  std::string message;
  std::string finished;  // name of the folder completed (or given up) by this call, if any
  uint64_t bytes = 0;    // bytes stored by this call
};

class ModelUploader {
 public:
  explicit ModelUploader(support::RetryPolicy policy);

  void add(ArtifactUpload upload) { queue_.push_back(Pending{std::move(upload), {}, false, 0, 0}); }
  bool has_work() const noexcept { return !queue_.empty(); }

  // Sends the next file (one PUT, no sleeping here).
  UploadResult upload_once(support::HttpClient& http, const StreamTarget& target);

  // Folders not (completely) uploaded, for reports: "name (dir, k of n files left)".
  std::vector<std::string> pending_description() const;
  uint64_t files_uploaded() const noexcept { return files_uploaded_; }

 private:
  struct Pending {
    ArtifactUpload upload;
    std::vector<std::string> files;  // relative paths, sorted; listed at the first attempt
    bool listed = false;
    size_t next = 0;  // index of the next file to send
    uint64_t bytes = 0;
  };

  support::Backoff backoff_;
  std::deque<Pending> queue_;
  uint64_t files_uploaded_ = 0;
};

}  // namespace trainhook::wandb
