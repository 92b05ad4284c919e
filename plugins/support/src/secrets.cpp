#include <trainhook/support/secrets.hpp>

#include <trainhook/secret_keys.hpp>

namespace trainhook::support {

// The rule lives once, in the SDK, shared with the core's masking.
bool looks_secret(std::string_view key) { return trainhook::is_secret_key(key); }

}  // namespace trainhook::support
