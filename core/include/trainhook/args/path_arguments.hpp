// The path arguments made absolute once, at start, before any plugin is
// created: the working directory is process-wide, and an in-process plugin
// that calls chdir() would otherwise send the run's model, checkpoints and
// results to another folder (outside the output_dir lock) and read its data
// from elsewhere. Relative paths resolve against the working directory at
// start, as the user meant them. No LibTorch here.
//
// Made absolute: output_dir, resume_from_checkpoint (not "true"),
// plugin_dir, model_name_or_path, train_file, validation_file, test_file (a
// glob pattern keeps its pattern: "data/*.bin" becomes "<cwd>/data/*.bin").
// run_name, which defaults to output_dir as given, keeps the user's spelling.
// --config and --args_file are read while parsing, before any plugin exists.
#pragma once

#include <trainhook/args/argument_parser.hpp>

#include <string>

namespace trainhook {

// `path` absolute against `cwd` (which is absolute): "." components and a
// trailing separator are dropped, ".." is kept (a symlinked folder's ".." is
// the file system's to resolve). An empty or absolute path is returned as is.
std::string absolute_path_against(const std::string& path, const std::string& cwd);

// Every path argument of `parsed` made absolute against the current working
// directory. Returns false, changing nothing, when the working directory
// cannot be read (deleted, or no permission): relative paths then stay as given.
bool make_path_arguments_absolute(ParsedArguments& parsed);

}  // namespace trainhook
