#include <trainhook/flyte/local_folder_store.hpp>
#include <trainhook/flyte/make_store.hpp>
#include <trainhook/flyte/s3_store.hpp>

namespace trainhook::flyte {

std::unique_ptr<Store> make_store(const Location& where, const FlyteOptions& options,
                                  const Cancellation* cancel) {
  if (where.kind == Location::Kind::local) return std::make_unique<LocalFolderStore>(where.path);
  S3Config config = S3Config::from_environment();
  config.multipart_threshold = options.multipart_threshold();
  config.part_size = options.part_size();
  config.ca_bundle = options.ca_bundle();
  return std::make_unique<S3Store>(std::move(config), where.bucket, where.prefix, cancel);
}

}  // namespace trainhook::flyte
