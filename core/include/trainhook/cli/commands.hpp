// The CLI's subcommands. main() (core/src/cli/main.cpp) only dispatches; each
// command lives in its own file in core/src/cli/. Each returns the exit code and
// prints its own errors.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace trainhook::cli {

// trainhook train [--flags] : train/evaluate/predict with the built-in models and data.
int train_command(const std::vector<std::string>& args, const std::string& program_path);
// trainhook plugins [--plugin_dir D]... : list every plugin library found, and refusals.
int plugins_command(const std::vector<std::string>& args, const std::string& program_path);
// trainhook plugin check LIBRARY [options] : check one plugin library before shipping it.
int plugin_command(const std::vector<std::string>& args, const std::string& program_path);
// trainhook launch --nproc_per_node N [--nnodes M --node_rank R] [--master_addr A]
// [--master_port P] -- <command> [args...] : torchrun's static launch without
// Python: N local processes of this program with RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT set; forwards SIGINT/SIGTERM,
// stops the others when one fails and returns the worst exit code.
int launch_command(const std::vector<std::string>& args, const std::string& program_path);

// trainhook --version | version : the package version, the plugin ABI, the LibTorch
// it was built with, and the plugin search path.
int version_command(const std::vector<std::string>& args, const std::string& program_path);

// Commands exported by plugin libraries (th_command_info): name and description,
// for `trainhook --help`; empty when the plugin folders cannot be read.
std::vector<std::pair<std::string, std::string>> plugin_command_list();
// trainhook <plugin-command> args... : runs it and returns its exit code. Throws
// std::invalid_argument for an unknown command (naming the closest of
// builtin_commands and plugin commands), PluginError when the command fails.
int run_plugin_command(const std::string& command, const std::vector<std::string>& args,
                       const std::vector<std::string>& builtin_commands);

}  // namespace trainhook::cli
