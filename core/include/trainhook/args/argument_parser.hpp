// HfArgumentParser for the CLI: `--name value` flags (Boost.Program_options), a
// JSON or YAML file (--config FILE), a `<program>.args` / --args_file FILE file
// of flags; flags override files. Validation as HF's TrainingArguments
// __post_init__. No LibTorch here.
#pragma once

#include <trainhook/common/errors.hpp>
#include <trainhook/args/arguments_json.hpp>
#include <trainhook/args/parsed_arguments.hpp>
#include <trainhook/args/training_arguments.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook {

// args excludes the program name and the subcommand ("train").
//
// Sources, lowest precedence first (a later one overrides an earlier one):
//   1. the defaults of the structs;
//   2. `<program_path>.args` (e.g. bin/trainhook.args), when program_path names
//      a file by a path with a '/' and that file exists: flags, as below;
//   3. the --config FILE (.json, .yaml or .yml): an object of `name: value`,
//      with "plugin_config" an object {"<callback>": {...}};
//   4. the --args_file FILE: flags, whitespace separated, '#' starts a comment,
//      "..." or '...' quote a value with spaces;
//   5. the command line.
// --config may be given in any flag source (the highest wins); --args_file on
// the command line or in <program>.args. A list (report_to, callbacks,
// plugin_dir) takes comma-separated and repeated values; a later source replaces
// the whole list. plugin_config entries merge key by key across all sources
// (`--plugin_config name.key=value`: value parsed as JSON when it parses, else a
// string; `name={...}` gives a whole object). Booleans: `--flag`,
// `--flag true|false|1|0|yes|no`, `--flag=value`. `--name-with-dashes` is the
// same as `--name_with_dashes`.
//
// --help or -h anywhere: returns {help = true} at once, nothing else parsed.
// Otherwise the result is validated (validate() below). Throws ArgumentError.
ParsedArguments parse_train_arguments(const std::vector<std::string>& args,
                                      const std::string& program_path = "trainhook");
// Grouped --help text with defaults.
std::string train_help_text();
// HF __post_init__ rules; throws ArgumentError. Fills derived defaults
// (eval_steps, metric_for_best_model, greater_is_better, run_name, do_eval when
// eval_strategy != no) and normalises spellings (optim "adamw" -> "adamw_torch",
// resume_from_checkpoint "True" -> "true", "false" -> unset).
void validate(TrainingArguments& a);
// Range checks of the CLI's model and data arguments (sizes > 0, dropout in
// [0, 1), validation_split_percentage in [0, 100), ...); throws ArgumentError.
void validate(ModelArguments& m);
void validate(DataArguments& d);

// TrainingArguments from a JSON object with the HF names (training_args.json as
// to_json() writes it, or a config file's object). Unknown keys are errors
// naming `source`; the result is validated. Model/data keys are not accepted here.
TrainingArguments training_arguments_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace trainhook
