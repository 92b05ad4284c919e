// Recognises keys whose values must never leave the machine as parameters or
// config (tokens, keys, passwords). Integrations drop such entries before
// sending training arguments or plugin configuration anywhere.
#pragma once

#include <string_view>

namespace trainhook::support {

// trainhook::is_secret_key (sdk/include/trainhook/secret_keys.hpp), the one
// rule the core also masks training_args_json with. Values of such keys reach
// plugins as "<KEY>" placeholders already; integrations drop them on top.
bool looks_secret(std::string_view key);

}  // namespace trainhook::support
