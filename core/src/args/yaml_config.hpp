// Private to the argument parser: a YAML --config file as JSON, read with
// yaml-cpp (Debian libyaml-cpp-dev; one well-kept parser instead of our own).
//
// Full YAML syntax: block and flow collections, lists of mappings, comments,
// quoted and block scalars (| >), anchors and aliases (& *), merge keys (<<).
// Plain scalars are typed by YAML 1.2's core schema, not yaml-cpp's YAML 1.1
// rules: null/~/empty, true/false, integers (also 0x.., 0o..), floats (5e-5,
// .inf, .nan); everything else, yes/no/on/off included, is a string. Quoted and
// block scalars are always strings. The standard tags !!str !!int !!float !!bool
// !!null are honoured; other tags, duplicate keys, non-scalar keys, a top level
// that is not a mapping and multi-document files are refused with an error
// naming file:line.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace trainhook::detail {

struct YamlDocument {
  nlohmann::json root;  // an object (empty for an empty file)
  // Line (1-based) of every mapping key by dotted path: "learning_rate",
  // "plugin_config.early_stopping.patience". A key that comes in by a merge
  // (<<) has the line where its anchored mapping wrote it.
  std::map<std::string, int> key_lines;
};

// Throws ArgumentError "<file>:<line>: <problem>".
YamlDocument parse_yaml_config(const std::string& text, const std::string& file);

}  // namespace trainhook::detail
