// trainhook: dispatches to a subcommand (see cli/commands.hpp).
#include <trainhook/cli/commands.hpp>
#include <trainhook/common/allocator_policy.hpp>
#include <trainhook/common/fatal_error_file.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: trainhook <command> [options]\n"
               "commands:\n"
               "  train     train, evaluate and predict (trainhook train --help)\n"
               "  plugins   list the plugin libraries found and why any was refused\n"
               "  plugin    check a plugin library before shipping it (trainhook plugin check --help)\n"
               "  launch    run a command in N processes, like torchrun (trainhook launch --help)\n"
               "  version   the version, plugin ABI, LibTorch and plugin search path (also --version)\n");
  // Commands added by plugin libraries (th_command_info).
  for (const auto& [name, description] : trainhook::cli::plugin_command_list())
    std::fprintf(out, "  %-9s %s (plugin)\n", name.c_str(), description.c_str());
}
}  // namespace

int main(int argc, char** argv) {
  // Before anything allocates: the step time must not depend on how the data
  // was loaded (allocator_policy.hpp). The user's MALLOC_* settings win.
  (void)trainhook::apply_allocator_policy();
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "train") return trainhook::cli::train_command(args, argv[0]);
    if (command == "plugins") return trainhook::cli::plugins_command(args, argv[0]);
    if (command == "plugin") return trainhook::cli::plugin_command(args, argv[0]);
    if (command == "launch") return trainhook::cli::launch_command(args, argv[0]);
    if (command == "version" || command == "--version") return trainhook::cli::version_command(args, argv[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainhook %s: error: %s\n", command.c_str(), e.what());
    // Under torchrun: its failure summary shows this message (fatal_error_file.hpp).
    if (command == "train") trainhook::write_torchelastic_error_file(e.what(), "trainhook train");
    return 1;
  }
  // Anything else may be a command that a plugin library exports.
  try {
    return trainhook::cli::run_plugin_command(command, args, {"train", "plugins", "plugin", "launch", "version"});
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "trainhook: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainhook %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
}
