// Base64 (RFC 4648, with padding) for binary data in a plugin's JSON state,
// e.g. the EMA weights bit for bit.
#pragma once

#include <string>

namespace trainhook::support {

std::string base64_encode(const void* data, size_t size);
// Throws std::runtime_error on a character outside the alphabet or a bad length.
std::string base64_decode(const std::string& text);

}  // namespace trainhook::support
