// Builds the Store for a Location: a LocalFolderStore or an S3Store (S3 settings
// from the AWS environment variables).
#pragma once

#include <checkpoint_sync/cancellation.hpp>
#include <checkpoint_sync/location.hpp>
#include <checkpoint_sync/store.hpp>
#include <checkpoint_sync/sync_options.hpp>

#include <memory>

namespace trainhook::checkpoint_sync {

// Throws trainhook::ConfigError when S3 credentials are missing.
std::unique_ptr<Store> make_store(const Location& where, const SyncOptions& options,
                                  const Cancellation* cancel);

}  // namespace trainhook::checkpoint_sync
