// trainhook: dispatches to a subcommand (see cli/commands.hpp).
#include <trainhook/cli/commands.hpp>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

namespace {
void usage(std::FILE* out) {
  std::fprintf(out,
               "usage: trainhook <command> [options]\n"
               "commands:\n"
               "  train     train, evaluate and predict (trainhook train --help)\n"
               "  plugins   list the plugin libraries found and why any was refused\n");
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (command == "train") return trainhook::cli::train_command(args, argv[0]);
    if (command == "plugins") return trainhook::cli::plugins_command(args, argv[0]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainhook %s: error: %s\n", command.c_str(), e.what());
    return 1;
  }
  std::fprintf(stderr, "trainhook: unknown command '%s'\n", command.c_str());
  usage(stderr);
  return 2;
}
