// The flyte callback's settings, from --plugin_config flyte.<key>=<value> or
// the environment. Flyte passes --checkpoint-path / --prev-checkpoint to a
// container; map them to flyte.checkpoint_path / flyte.prev_checkpoint (or to
// TRAINHOOK_CHECKPOINT_DEST / TRAINHOOK_PREV_CHECKPOINT) in the task's args.
#pragma once

#include <trainhook/flyte/location.hpp>
#include <trainhook/options.hpp>
#include <trainhook/support/retry.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace trainhook::flyte {

// The plugin_config keys as given (text locations, seconds, bytes), declared
// once in table(); FlyteOptions::from_json turns them into the callback's settings.
class FlyteKeys {
  TRAINHOOK_OPTION(std::string, checkpoint_path, "");

 public:
  TRAINHOOK_OPTION(std::string, prev_checkpoint, "");

 public:
  TRAINHOOK_OPTION(bool, restore_all, false);

 public:
  TRAINHOOK_OPTION(std::chrono::milliseconds, wait_timeout, std::chrono::seconds(300));

 public:
  TRAINHOOK_OPTION(double, retry_seconds, 120);

 public:
  TRAINHOOK_OPTION(uint64_t, multipart_threshold, 64ull << 20);

 public:
  TRAINHOOK_OPTION(uint64_t, part_size, 16ull << 20);

 public:
  TRAINHOOK_OPTION(bool, deck, true);

 public:
  TRAINHOOK_OPTION(std::string, ca_bundle, "");

 public:
  static const OptionTable<FlyteKeys>& table();
};

// Built with chained setters (FlyteOptions().destination(loc).deck(false)) or
// read from the plugin_config section and the environment by parse().
class FlyteOptions {
 public:
  using OptionalLocation = std::optional<Location>;

  TRAINHOOK_OPTION(OptionalLocation, destination,
                   std::nullopt);                              // checkpoint_path / TRAINHOOK_CHECKPOINT_DEST
  TRAINHOOK_OPTION(OptionalLocation, previous, std::nullopt);  // prev_checkpoint / TRAINHOOK_PREV_CHECKPOINT
  TRAINHOOK_OPTION(bool, restore_all, false);  // restore=all: every complete checkpoint, not only the newest
  TRAINHOOK_OPTION(std::chrono::milliseconds, wait_timeout, std::chrono::seconds(300));  // at train end
  // Per store operation (one file, one part): exponential backoff from 0.5 s to
  // 8 s with jitter, for up to retry_seconds (120 s) in all.
  TRAINHOOK_OPTION(support::RetryPolicy, retry,
                   support::RetryPolicy()
                       .initial_delay(std::chrono::milliseconds(500))
                       .max_delay(std::chrono::seconds(8))
                       .jitter(0.25)
                       .max_elapsed(std::chrono::seconds(120)));
  TRAINHOOK_OPTION(uint64_t, multipart_threshold, 64ull << 20);
  TRAINHOOK_OPTION(uint64_t, part_size, 16ull << 20);
  TRAINHOOK_OPTION(bool, deck, true);            // write and upload log_history.html
  TRAINHOOK_OPTION(std::string, ca_bundle, {});  // S3 over HTTPS: PEM CAs to trust; empty = the system's

 public:
  // Throws trainhook::ConfigError naming the key / variable and what was expected.
  static FlyteOptions from_json(const std::string& config_json);
};

}  // namespace trainhook::flyte
