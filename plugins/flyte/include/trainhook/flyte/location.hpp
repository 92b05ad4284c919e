// Where checkpoints go and come from: Flyte hands a container two prefixes
// (--checkpoint-path, --prev-checkpoint). Here they arrive as plugin
// configuration (flyte.checkpoint_path / flyte.prev_checkpoint) or the
// environment (TRAINHOOK_CHECKPOINT_DEST / TRAINHOOK_PREV_CHECKPOINT).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainhook::flyte {

// Flyte's "no location": empty, a quoted empty string ("" or ''), or a template
// Flyte did not replace ("{{ .checkpointOutputPrefix }}"). Whitespace is ignored.
bool is_unset_location(std::string_view text);

struct Location {
  enum class Kind { local, s3 };
  Kind kind = Kind::local;
  std::string path;             // local: the folder (file:// stripped)
  std::string bucket;           // s3
  std::string prefix;           // s3: key prefix without leading/trailing '/', may be empty
  std::string display() const;  // for logs; never holds credentials
};

// Parses "s3://bucket/prefix", "file:///abs/path" or a plain path. Returns
// nullopt for an unset location. Throws std::invalid_argument naming `what`
// (the key or variable it came from) for a malformed one.
std::optional<Location> parse_location(std::string_view text, const std::string& what);

}  // namespace trainhook::flyte
