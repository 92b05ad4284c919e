// train_help_text(): `trainhook train --help`, grouped, each option with its
// value type, meaning and default, generated from the option table so it can
// never disagree with the parser.
#include <trainhook/args/argument_parser.hpp>

#include "argument_options.hpp"

#include <algorithm>
#include <cstdint>

namespace trainhook {
namespace {

using detail::ValueKind;

const char* type_label(ValueKind k) {
  switch (k) {
    case ValueKind::Bool:
    case ValueKind::OptionalBool:
      return "[BOOL]";
    case ValueKind::Integer:
    case ValueKind::OptionalInteger:
      return "INT";
    case ValueKind::Number:
    case ValueKind::OptionalNumber:
      return "FLOAT";
    case ValueKind::String:
    case ValueKind::OptionalString:
      return "STR";
    case ValueKind::List:
      return "A,B,...";
    case ValueKind::PluginConfig:
      return "NAME.KEY=VALUE";
  }
  return "";
}

std::string default_text(const nlohmann::json& v) {
  if (v.is_null()) return "unset";
  // 500 rather than 500.0 for a whole float.
  if (v.is_number_float() && v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>())))
    return std::to_string(static_cast<int64_t>(v.get<double>()));
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    if (v.empty()) return "none given";
    std::string out;
    for (const auto& item : v)
      out += (out.empty() ? "" : ",") + (item.is_string() ? item.get<std::string>() : item.dump());
    return out;
  }
  return v.dump();
}

}  // namespace

std::string train_help_text() {
  const ParsedArguments defaults;
  const auto& table = detail::option_table();
  size_t width = 0;
  for (const auto& o : table)
    width = std::max(width, o.name.size() + 3 + std::string(type_label(o.kind)).size());
  width = std::min<size_t>(width, 44);

  std::string out =
      "usage: trainhook train [--name value ...] [--config FILE] [--args_file FILE]\n"
      "\n"
      "Train, evaluate and predict with a built-in model. Arguments have the names,\n"
      "meanings and defaults of Hugging Face TrainingArguments.\n"
      "\n"
      "Sources, lowest precedence first: <program>.args next to the program, --config\n"
      "FILE (.json, .yaml or .yml: {name: value}, plugin_config as an object),\n"
      "--args_file FILE (flags, # comments), the command line. Booleans: --flag or\n"
      "--flag true|false. Lists: comma-separated or repeated values.\n"
      "\n"
      "General:\n";
  const auto line = [&out, width](const std::string& left, const std::string& text) {
    std::string l = "  " + left;
    if (l.size() < width + 4) {
      l.append(width + 4 - l.size(), ' ');
    } else {
      l += "\n" + std::string(width + 4, ' ');
    }
    out += l + text + "\n";
  };
  line("--config FILE", "Read arguments from a .json, .yaml or .yml file");
  line("--args_file FILE", "Read flags from a file");
  line("--help, -h", "Show this help");

  for (auto group :
       {detail::OptionGroup::Output, detail::OptionGroup::Training, detail::OptionGroup::LogEvalSave,
        detail::OptionGroup::Reproducibility, detail::OptionGroup::Integrations,
        detail::OptionGroup::MultiProcess, detail::OptionGroup::Model, detail::OptionGroup::Data}) {
    out += std::string("\n") + detail::group_title(group) + ":\n";
    for (const auto& o : table) {
      if (o.group != group) continue;
      const std::string shown = o.derived_default.empty() ? default_text(o.get(defaults)) : o.derived_default;
      line("--" + o.name + " " + type_label(o.kind), o.help + " [default: " + shown + "]");
    }
  }
  out +=
      "\nHugging Face arguments that trainhook does not support (tf32, push_to_hub, deepspeed, ...)\n"
      "are refused with the reason, or ignored with a warning when they would change nothing.\n";
  return out;
}

}  // namespace trainhook
