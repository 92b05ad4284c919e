// Uploading one checkpoint folder: its files first, the manifest (sizes and
// SHA-256) last, each with retries.
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/staging_folders.hpp>
#include <trainhook/flyte/store.hpp>
#include <trainhook/support/log.hpp>

#include <filesystem>
#include <string>

namespace trainhook::flyte {

// Freezes a checkpoint for a background upload by hard-linking its files into
// an empty folder taken from `staging` (no data copied), so the trainer may
// delete the original (save_total_limit) while it uploads. Returns the staged
// folder (give it back to `staging` after the upload), or the original folder
// when links are not possible (another file system); never throws.
std::filesystem::path stage_checkpoint(const std::filesystem::path& checkpoint_dir, StagingFolders& staging,
                                       const support::Logger& log);

// Uploads dir's files under "<name>/...", then "<name>/trainhook_manifest.json".
// The manifest is written to manifest_scratch (a file path outside dir).
// Throws StoreError (or std::runtime_error for unreadable local files).
void upload_checkpoint(Store& store, const std::filesystem::path& dir, const std::string& name,
                       const std::filesystem::path& manifest_scratch, const support::RetryPolicy& retry,
                       const Cancellation& cancel, const support::Logger& log);

}  // namespace trainhook::flyte
