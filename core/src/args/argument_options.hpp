// Private to the argument parser: the table of every `trainhook train` option
// (name, help group, value kind, one-line meaning) and the typed conversion of a
// value (a flag's string or a config file's JSON value) into its struct field.
// The table is the single source for the Boost.Program_options description, the
// config-file keys, --help and the "did you mean" candidates.
#pragma once

#include <trainhook/args/parsed_arguments.hpp>
#include <trainhook/common/errors.hpp>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainhook::detail {

enum class OptionGroup {
  Output,
  Training,
  LogEvalSave,
  Reproducibility,
  Integrations,
  MultiProcess,
  Model,
  Data
};

// The struct an option's field lives in.
enum class ArgumentPart { Training, Model, Data };

enum class ValueKind {
  Bool,          // --flag, --flag true|false|...
  OptionalBool,  // as Bool, plus none/null = unset
  Integer,
  OptionalInteger,
  Number,
  OptionalNumber,
  String,
  OptionalString,
  List,          // strings; comma-separated and repeated values
  PluginConfig,  // name.key=value pairs / an object of objects
};

struct OptionSpec {
  std::string name;
  OptionGroup group;
  ValueKind kind;
  std::string help;
  // Sets the field from a value: a JSON string for a flag (converted from text),
  // or any JSON value from a config file. Lists get an array (already merged
  // for the source); PluginConfig gets an object to merge in. Throws ValueError.
  std::function<void(ParsedArguments&, const nlohmann::json&)> set;
  // The field's current value as JSON (for --help defaults).
  std::function<nlohmann::json(const ParsedArguments&)> get;
  // Which struct it belongs to: training arguments go to training_args.json.
  ArgumentPart part = ArgumentPart::Training;
  bool is_training() const { return part == ArgumentPart::Training; }
  // --help's default when it is derived from other arguments ("output_dir").
  std::string derived_default;
};

// Every option, in help order.
const std::vector<OptionSpec>& option_table();
// nullptr when `name` is not an option.
const OptionSpec* find_option(const std::string& name);
// The options of one struct, as JSON with the option names as keys: the one
// source of to_json(TrainingArguments/ModelArguments/DataArguments).
nlohmann::json part_to_json(const ParsedArguments& p, ArgumentPart part);
// All option names (for closest_name).
std::vector<std::string> option_names();
// The help heading of a group.
const char* group_title(OptionGroup g);

// Flag-value helpers shared with the parser.
bool is_bool_literal(const std::string& text);
// true/false for a bool literal (true,false,1,0,yes,no,t,f,y,n,on,off; any case).
bool parse_bool_literal(const std::string& text, bool& out);
// A JSON value as short text for messages: strings unquoted when plain.
std::string describe_value(const nlohmann::json& v);

// Merges `patch` into `target` key by key (objects recursively; anything else
// replaced), so later sources win per key.
void merge_json_objects(nlohmann::json& target, const nlohmann::json& patch);
// One `--plugin_config` value, "name.key=value" or "name={...}", as an object
// {"name": {"key": value}}; dots in the key make nested objects. Throws ValueError.
nlohmann::json parse_plugin_config_assignment(const std::string& text);

}  // namespace trainhook::detail
