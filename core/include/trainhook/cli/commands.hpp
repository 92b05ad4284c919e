// The CLI's subcommands. main() (core/src/cli/main.cpp) only dispatches; each
// command lives in its own file in core/src/cli/. Each returns the exit code and
// prints its own errors.
#pragma once

#include <string>
#include <vector>

namespace trainhook::cli {

// trainhook train [--flags] : train/evaluate/predict with the built-in models and data.
int train_command(const std::vector<std::string>& args, const std::string& program_path);
// trainhook plugins [--plugin_dir D]... : list every plugin library found, and refusals.
int plugins_command(const std::vector<std::string>& args, const std::string& program_path);

}  // namespace trainhook::cli
