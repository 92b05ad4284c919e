// What parsing a command line gives (parse_train_arguments,
// argument_parser.hpp): the training, model and data arguments and the
// warnings. Its own header so that the option table and the JSON form of the
// arguments need no parser. No LibTorch here.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <string>
#include <vector>

namespace trainhook {

struct ParsedArguments {
  TrainingArguments training;
  ModelArguments model;
  DataArguments data;
  bool help = false;                  // --help given: help_text() was requested
  std::vector<std::string> warnings;  // e.g. unsupported HF arguments that are harmless
};

}  // namespace trainhook
