// HfArgumentParser for the CLI: `--name value` flags (Boost.Program_options), a
// JSON or YAML file (--config FILE), a `<program>.args` / --args_file FILE file
// of flags; flags override files. Validation as HF's TrainingArguments
// __post_init__. No LibTorch here.
#pragma once

#include <trainhook/training_arguments.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace trainhook {

// Every user-facing argument problem; the message names the flag/key (and the
// file) at fault, what was expected, and the closest valid name for a typo.
class ArgumentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ParsedArguments {
  TrainingArguments training;
  ModelArguments model;
  DataArguments data;
  bool help = false;        // --help given: help_text() was requested
  std::vector<std::string> warnings;  // e.g. unsupported HF arguments that are harmless
};

// args excludes the program name and the subcommand ("train").
ParsedArguments parse_train_arguments(const std::vector<std::string>& args,
                                      const std::string& program_path = "trainhook");
// Grouped --help text with defaults.
std::string train_help_text();
// HF __post_init__ rules; throws ArgumentError. Fills derived defaults
// (eval_steps, metric_for_best_model, greater_is_better, run_name).
void validate(TrainingArguments& a);

}  // namespace trainhook
