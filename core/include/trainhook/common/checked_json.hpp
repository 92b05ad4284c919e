// Parsing JSON that comes from a file or a user (config files, trainer_state.json,
// checkpoint metadata): nlohmann accepts any nesting depth (deep nesting
// exhausts the stack) and silently keeps the last of duplicate keys. This
// parser refuses both, with the line, before a value is built.
// No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace trainhook {

// Thrown with "<where>:<line>: <what>" (or "<where>: <what>" when no line is
// known); callers rethrow as their own error type when they need one.
class JsonInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonLimits {
  // Objects and arrays inside each other; no config or state file of ours
  // comes near it, and it keeps every recursive walk of the value far from the
  // stack's end.
  size_t max_depth = 100;
  // Duplicate keys in one object are an error (as YAML's are) rather than the
  // last one winning silently.
  bool reject_duplicate_keys = true;
};

// `where` names the source (usually the file's path) in every message.
nlohmann::json parse_checked_json(const std::string& text, const std::string& where, JsonLimits limits = {});

// A whole file through parse_checked_json, named by its path; one that cannot
// be opened is a JsonInputError "<path>: cannot be opened (missing or unreadable)".
nlohmann::json read_checked_json_file(const std::string& path, JsonLimits limits = {});

}  // namespace trainhook
