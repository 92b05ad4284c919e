// parse_train_arguments(): flags (Boost.Program_options), --config files and args
// files, layered by precedence (see argument_parser.hpp), then validated.
#include <trainhook/args/argument_parser.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/strings.hpp>

#include "argument_options.hpp"
#include "config_files.hpp"
#include "unsupported_arguments.hpp"

#include <boost/program_options.hpp>
#include <array>
#include <filesystem>
#include <map>
#include <optional>

namespace po = boost::program_options;

namespace trainhook {
namespace {

using detail::OptionSpec;
using detail::ValueKind;

// Options about the sources themselves; not fields of any struct.
constexpr const char* kConfig = "config";
constexpr const char* kArgsFile = "args_file";

// Where a flag came from, for messages: "the command line" or "file:line".
struct FlagToken {
  std::string text;
  std::string where;
};

// Values of one source, ready to apply: name -> value (a list's values already
// concatenated, plugin_config's assignments merged), in first-seen order.
struct Layer {
  std::vector<std::pair<std::string, nlohmann::json>> values;
  std::vector<std::string> where;  // per value, for messages
  std::optional<std::string> config;
  std::optional<std::string> args_file;
  std::string args_file_where;

  nlohmann::json* find(const std::string& name) {
    for (auto& [n, v] : values)
      if (n == name) return &v;
    return nullptr;
  }
  // A repeated scalar flag: the last value (and its place) wins, as with argparse.
  void replace(const std::string& name, const std::string& value, const std::string& from) {
    for (size_t k = 0; k < values.size(); ++k) {
      if (values[k].first == name) {
        values[k].second = value;
        where[k] = from;
      }
    }
  }
};

using strings::starts_with;

std::string suggestion(const std::string& name) {
  std::vector<std::string> candidates = detail::option_names();
  candidates.push_back(kConfig);
  candidates.push_back(kArgsFile);
  const std::string close = closest_name(name, candidates);
  return close.empty() ? std::string() : " (did you mean '" + close + "'?)";
}

std::string suffix_for(const std::string& where) {
  return where == "the command line" ? std::string() : " (in " + where + ")";
}

[[noreturn]] void unknown_flag(const std::string& name, const std::string& where) {
  throw ArgumentError("unknown argument --" + name + suffix_for(where) + suggestion(name) +
                      "; see trainhook train --help");
}

// One occurrence of a flag after normalise(): its name and its one value.
struct Occurrence {
  std::string name;
  std::string value;
  std::string where;
};

// `--name value` / `--name=value` / `--flag` / `--list a b` -> one Occurrence
// per value. Booleans take the next token only when it is a boolean literal.
// An unknown name ends the list: Program_options reports it.
std::vector<Occurrence> normalise(const std::vector<FlagToken>& tokens) {
  std::vector<Occurrence> out;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const FlagToken& tok = tokens[i];
    if (!starts_with(tok.text, "--") || tok.text == "--")
      throw ArgumentError("unexpected argument '" + tok.text + "'" + suffix_for(tok.where) +
                          ": arguments are flags, --name value");
    std::string body = tok.text.substr(2);
    std::optional<std::string> value;
    const size_t eq = body.find('=');
    if (eq != std::string::npos) {
      value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    for (auto& c : body)
      if (c == '-') c = '_';
    if (body.empty()) throw ArgumentError("unexpected argument '" + tok.text + "'" + suffix_for(tok.where));

    const OptionSpec* spec = detail::find_option(body);
    const detail::UnsupportedArgument* unsupported = detail::find_unsupported(body);
    const bool known = spec != nullptr || unsupported != nullptr || body == kConfig || body == kArgsFile;
    const bool bool_like =
        (spec != nullptr && (spec->kind == ValueKind::Bool || spec->kind == ValueKind::OptionalBool)) ||
        (unsupported != nullptr && unsupported->flag_like);
    const auto emit = [&](const std::string& v) { out.push_back({body, v, tok.where}); };
    const auto next_is_value = [&] {
      return i + 1 < tokens.size() && !starts_with(tokens[i + 1].text, "--");
    };

    if (!known) {
      // Program_options reports it; what follows (maybe its value) is moot.
      emit("");
      break;
    } else if (value) {
      emit(*value);
    } else if (bool_like) {
      const bool takes_next =
          i + 1 < tokens.size() && (detail::is_bool_literal(tokens[i + 1].text) ||
                                    (spec != nullptr && spec->kind == ValueKind::OptionalBool &&
                                     (tokens[i + 1].text == "none" || tokens[i + 1].text == "null")));
      emit(takes_next ? tokens[++i].text : "true");
    } else if (spec != nullptr && spec->kind == ValueKind::List) {
      if (!next_is_value())
        throw ArgumentError("--" + body + suffix_for(tok.where) + " expects one or more values");
      while (next_is_value()) emit(tokens[++i].text);
    } else {
      if (!next_is_value()) throw ArgumentError("--" + body + suffix_for(tok.where) + " expects a value");
      emit(tokens[++i].text);
    }
  }
  return out;
}

// Program_options recognises the names (exactly: no prefix guessing, so a typo
// is reported with the closest name instead of silently matching another
// option); the values stay with the Occurrences, already split off above, so
// empty values and values starting with '-' need no quoting.
const po::options_description& flag_description() {
  static const po::options_description desc = [] {
    po::options_description d;
    const auto add = [&d](const std::string& name) { d.add_options()(name.c_str(), ""); };
    for (const auto& o : detail::option_table()) add(o.name);
    for (const auto& u : detail::unsupported_arguments()) add(u.name);
    add(kConfig);
    add(kArgsFile);
    return d;
  }();
  return desc;
}

void add_warning_or_throw(ParsedArguments& out, const detail::UnsupportedArgument& u,
                          const nlohmann::json& value, const std::string& where) {
  const detail::UnsupportedVerdict verdict = detail::judge_unsupported(u, value, where);
  if (verdict.is_error) throw ArgumentError(verdict.message);
  out.warnings.push_back(verdict.message);
}

// One source of flags -> its Layer. Unsupported HF arguments are judged here.
Layer parse_flags(const std::vector<FlagToken>& raw, ParsedArguments& out) {
  const std::vector<Occurrence> occurrences = normalise(raw);
  std::vector<std::string> names;
  names.reserve(occurrences.size());
  for (const auto& o : occurrences) names.push_back("--" + o.name);

  po::parsed_options parsed(nullptr);
  try {
    parsed = po::command_line_parser(names)
                 .options(flag_description())
                 .style(po::command_line_style::allow_long | po::command_line_style::long_allow_adjacent)
                 .run();
  } catch (const po::unknown_option& e) {
    std::string name = e.get_option_name();
    while (starts_with(name, "-")) name.erase(0, 1);
    std::string where = "the command line";
    for (const auto& o : occurrences)
      if (o.name == name) where = o.where;
    unknown_flag(name, where);
  } catch (const po::error& e) {
    throw ArgumentError(std::string("invalid arguments: ") + e.what());
  }
  if (parsed.options.size() != occurrences.size())
    throw ArgumentError("internal error: the flags did not parse one occurrence per name");

  Layer layer;
  for (size_t k = 0; k < parsed.options.size(); ++k) {
    const std::string& name = parsed.options[k].string_key;
    const std::string& value = occurrences[k].value;
    const std::string& where = occurrences[k].where;
    if (name == kConfig) {
      layer.config = value;
      continue;
    }
    if (name == kArgsFile) {
      layer.args_file = value;
      layer.args_file_where = where;
      continue;
    }
    if (const auto* u = detail::find_unsupported(name)) {
      add_warning_or_throw(out, *u, value, "--" + name + suffix_for(where));
      continue;
    }
    const OptionSpec* spec = detail::find_option(name);
    nlohmann::json* existing = layer.find(name);
    try {
      if (spec->kind == ValueKind::List) {
        if (existing == nullptr) {
          layer.values.emplace_back(name, nlohmann::json::array());
          layer.where.push_back(where);
          existing = &layer.values.back().second;
        }
        existing->push_back(value);
      } else if (spec->kind == ValueKind::PluginConfig) {
        const nlohmann::json assignment = detail::parse_plugin_config_assignment(value);
        if (existing == nullptr) {
          layer.values.emplace_back(name, nlohmann::json::object());
          layer.where.push_back(where);
          existing = &layer.values.back().second;
        }
        detail::merge_json_objects(*existing, assignment);
      } else if (existing != nullptr) {
        layer.replace(name, value, where);
      } else {
        layer.values.emplace_back(name, value);
        layer.where.push_back(where);
      }
    } catch (const ValueError& e) {
      throw ArgumentError("--" + name + suffix_for(where) + ": " + e.what());
    }
  }
  return layer;
}

// A --config file -> its Layer; unknown keys name the file (and line).
Layer parse_config(const detail::ConfigFile& file, ParsedArguments& out) {
  Layer layer;
  for (const auto& [key, value] : file.values.items()) {
    const std::string where = file.where(key);
    if (key == kConfig || key == kArgsFile)
      throw ArgumentError(where + ": key '" + key + "' is not allowed in a config file (give it as a flag)");
    if (const auto* u = detail::find_unsupported(key)) {
      add_warning_or_throw(out, *u, value, where + ": key '" + key + "'");
      continue;
    }
    if (detail::find_option(key) == nullptr) {
      std::string message = where + ": unknown key '" + key + "'";
      const std::string close = closest_name(key, detail::option_names());
      if (!close.empty()) message += " (did you mean '" + close + "'?)";
      throw ArgumentError(message + "; see trainhook train --help");
    }
    layer.values.emplace_back(key, value);
    layer.where.push_back(where);
  }
  return layer;
}

void apply(const Layer& layer, ParsedArguments& out, bool from_file) {
  for (size_t k = 0; k < layer.values.size(); ++k) {
    const auto& [name, value] = layer.values[k];
    try {
      detail::find_option(name)->set(out, value);
    } catch (const ValueError& e) {
      if (from_file) throw ArgumentError(layer.where[k] + ": key '" + name + "': " + e.what());
      throw ArgumentError("--" + name + suffix_for(layer.where[k]) + ": " + e.what());
    }
  }
}

std::vector<FlagToken> file_tokens(const std::string& path) {
  std::vector<FlagToken> tokens;
  for (auto& t : detail::read_args_file(path))
    tokens.push_back({std::move(t.text), path + ":" + std::to_string(t.line)});
  return tokens;
}

// bin/trainhook -> bin/trainhook.args (HF: sys.argv[0] with the suffix .args).
std::optional<std::string> program_args_file(const std::string& program_path) {
  if (program_path.find('/') == std::string::npos) return std::nullopt;  // found via PATH: no folder known
  std::filesystem::path p(program_path);
  p.replace_extension(".args");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(p, ec)) return std::nullopt;
  return p.string();
}

// Flags that each choose the same thing: giving both would silently ignore one.
void refuse_conflicts(const std::map<std::string, std::string>& origin) {
  static const std::vector<std::array<const char*, 3>> pairs = {
      {"model_name_or_path", "model",
       "--model_name_or_path trains a TorchScript archive instead of the built-in --model; give one of them"},
  };
  for (const auto& [a, b, why] : pairs) {
    const auto ia = origin.find(a), ib = origin.find(b);
    if (ia == origin.end() || ib == origin.end()) continue;
    throw ArgumentError("--" + std::string(a) + suffix_for(ia->second) + " and --" + b + suffix_for(ib->second) +
                        " conflict: " + why);
  }
}

// "--name: ..." from validate() -> "--name (in file:line): ..." when the value
// came from a file.
std::string with_origin(const std::string& message, const std::map<std::string, std::string>& origin) {
  if (message.rfind("--", 0) != 0) return message;
  const size_t end = message.find_first_of(": ", 2);
  if (end == std::string::npos) return message;
  const auto it = origin.find(message.substr(2, end - 2));
  if (it == origin.end()) return message;
  return message.substr(0, end) + suffix_for(it->second) + message.substr(end);
}

}  // namespace

ParsedArguments parse_train_arguments(const std::vector<std::string>& args, const std::string& program_path) {
  ParsedArguments out;
  for (const auto& a : args) {
    if (a == "--help" || a == "-h") {
      out.help = true;
      return out;
    }
  }

  Layer site;
  if (const auto path = program_args_file(program_path)) site = parse_flags(file_tokens(*path), out);

  std::vector<FlagToken> command_line;
  for (const auto& a : args) command_line.push_back({a, "the command line"});
  Layer command = parse_flags(command_line, out);

  Layer from_args_file;
  if (const auto& path = command.args_file ? command.args_file : site.args_file) {
    from_args_file = parse_flags(file_tokens(*path), out);
    if (from_args_file.args_file)
      throw ArgumentError("--args_file (in " + from_args_file.args_file_where +
                          "): an args file cannot name another args file");
  }

  Layer config;
  const std::optional<std::string> config_path = command.config          ? command.config
                                                 : from_args_file.config ? from_args_file.config
                                                                         : site.config;
  if (config_path) config = parse_config(detail::read_config_file(*config_path), out);

  apply(site, out, false);
  apply(config, out, true);
  apply(from_args_file, out, false);
  apply(command, out, false);

  // Where each value came from (the layer applied last wins): the checks below
  // read the merged result, and their messages must name the file and line.
  std::map<std::string, std::string> origin;
  for (const Layer* layer : {&site, &config, &from_args_file, &command})
    for (size_t k = 0; k < layer->values.size(); ++k) origin[layer->values[k].first] = layer->where[k];
  refuse_conflicts(origin);
  try {
    validate(out.training);
    validate(out.model);
    validate(out.data);
  } catch (const ArgumentError& e) {
    throw ArgumentError(with_origin(e.what(), origin));
  }
  return out;
}

TrainingArguments training_arguments_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw ArgumentError(source + ": expected a JSON object of training arguments");
  ParsedArguments out;
  for (const auto& [key, value] : j.items()) {
    const OptionSpec* spec = detail::find_option(key);
    if (spec == nullptr || !spec->is_training()) {
      std::vector<std::string> names;
      for (const auto& o : detail::option_table())
        if (o.is_training()) names.push_back(o.name);
      const std::string close = closest_name(key, names);
      throw ArgumentError(source + ": unknown training argument '" + key + "'" +
                          (close.empty() ? std::string() : " (did you mean '" + close + "'?)"));
    }
    try {
      spec->set(out, value);
    } catch (const ValueError& e) {
      throw ArgumentError(source + ": key '" + key + "': " + e.what());
    }
  }
  validate(out.training);
  return out.training;
}

}  // namespace trainhook
