// Private to the argument parser: the YAML subset a --config file may use.
//
//   key: value             plain, 'single' or "double" quoted scalars
//   key: [a, b, "c"]       flow lists (and flow maps {k: v})
//   key:                   block lists of scalars
//     - a
//   plugin_config:         nested mappings, by indentation (spaces only)
//     early_stopping:
//       patience: 3
//   # comments, blank lines, a leading "---"
//
// Scalars resolve as YAML 1.2's core schema: null/~, true/false, integers,
// floats (5e-5 too), .inf/.nan; everything else is a string. Anchors, aliases,
// tags, block scalars (| >), multi-document files and lists of mappings are
// refused with an error naming file:line.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace trainhook::detail {

struct YamlDocument {
  nlohmann::json root;  // an object (empty for an empty file)
  // Line (1-based) of every mapping key by dotted path: "learning_rate",
  // "plugin_config.early_stopping.patience".
  std::map<std::string, int> key_lines;
};

// Throws ArgumentError "<file>:<line>: <problem>".
YamlDocument parse_yaml_subset(const std::string& text, const std::string& file);

}  // namespace trainhook::detail
