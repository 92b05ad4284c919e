// Private to the argument parser: reading a --config file (JSON or YAML) and an
// args file (`<program>.args`, --args_file). Errors name the file (and the line
// where one is known) and throw ArgumentError.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainhook::detail {

struct ConfigFile {
  std::string path;
  nlohmann::json values;                 // the top-level object
  std::map<std::string, int> key_lines;  // YAML only: dotted key -> line
  // "cfg.yaml:12" when the key's line is known, else "cfg.json".
  std::string where(const std::string& key) const;
};

// By extension: .json, .yaml, .yml (any case).
ConfigFile read_config_file(const std::string& path);

struct ArgsFileToken {
  std::string text;
  int line;
};

// Whitespace-separated flags; '#' at the start of a token comments out the rest
// of the line; "..." and '...' group text with spaces (quotes removed).
std::vector<ArgsFileToken> read_args_file(const std::string& path);

}  // namespace trainhook::detail
