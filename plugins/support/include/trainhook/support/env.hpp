// Environment variables, read the way the Hugging Face integrations read them.
// A plugin's own settings come from its option table (trainhook/options.hpp),
// which reads their variables itself; this is for the others (USER, AWS_*).
#pragma once

#include <optional>
#include <string>

namespace trainhook::support {

// The variable's value; std::nullopt when unset or empty.
std::optional<std::string> get_env(const char* name);

}  // namespace trainhook::support
