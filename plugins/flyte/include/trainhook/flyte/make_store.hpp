// Builds the Store for a Location: a LocalFolderStore or an S3Store (S3 settings
// from the AWS environment variables).
#pragma once

#include <trainhook/flyte/cancellation.hpp>
#include <trainhook/flyte/flyte_options.hpp>
#include <trainhook/flyte/location.hpp>
#include <trainhook/flyte/store.hpp>

#include <memory>

namespace trainhook::flyte {

// Throws trainhook::ConfigError when S3 credentials are missing.
std::unique_ptr<Store> make_store(const Location& where, const FlyteOptions& options,
                                  const Cancellation* cancel);

}  // namespace trainhook::flyte
