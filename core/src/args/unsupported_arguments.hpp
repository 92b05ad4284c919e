// Private to the argument parser: Hugging Face TrainingArguments that trainhook
// knows but does not support, each with the reason, and whether giving it is
// an error or only a warning. Users copy HF configs; none of these is ever
// silently ignored.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainhook::detail {

inline constexpr const char* kAlwaysWarn = nullptr;
inline constexpr const char* kAlwaysError = "!";

struct UnsupportedArgument {
  const char* name;
  // true: takes a boolean like our flags (`--fp16` alone means true).
  bool flag_like;
  // Values that change nothing here (lower case, comma-separated; an empty item
  // is the empty string): giving one of them is a warning, any other value an
  // error. kAlwaysWarn: harmless whatever the value. kAlwaysError: never harmless.
  const char* harmless_values;
  const char* reason;
};

const std::vector<UnsupportedArgument>& unsupported_arguments();
const UnsupportedArgument* find_unsupported(const std::string& name);

struct UnsupportedVerdict {
  bool is_error = false;
  std::string message;  // the error, or the warning for ParsedArguments::warnings
};

// Judges giving `arg` the value `value` (a flag's text as a JSON string, or a
// config file's JSON value). `where` names the source: "--fp16" or
// "config.json: key 'fp16'".
UnsupportedVerdict judge_unsupported(const UnsupportedArgument& arg, const nlohmann::json& value,
                                     const std::string& where);

}  // namespace trainhook::detail
