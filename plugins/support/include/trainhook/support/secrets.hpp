// Recognises keys whose values must never leave the machine as parameters or
// config (tokens, keys, passwords). Integrations drop such entries before
// sending training arguments or plugin configuration anywhere.
#pragma once

#include <string_view>

namespace trainhook::support {

// True when the key, split at '_', '-', '.', '/', ':' and lower/upper case
// boundaries, has a part such as token, secret, password, passwd, pwd,
// credential(s), apikey, auth, authorization, cookie, or a part "key" (api_key,
// aws_secret_access_key, key). Deliberately over-inclusive: a false positive
// costs one missing parameter, a false negative leaks a credential.
bool looks_secret(std::string_view key);

}  // namespace trainhook::support
