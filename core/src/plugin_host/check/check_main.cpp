// trainhook-plugin-check GROUP LIBRARY FOLDER [options]: runs one group of
// the checks of `trainhook plugin check` (plugin_host/check/plugin_check.cpp starts
// one such process per group) on a plugin library, in this short-lived
// process, so that what the library does to its process (a crash, a hang,
// threads, signal handlers, a changed working directory) is seen here and
// never reaches the caller.
//   GROUP    entry | events | hostile | timing | memory (checks.hpp)
//   FOLDER   this run's fresh folder: cwd/ (the working directory, which must
//            stay empty), output_dir/ (th_host.output_dir) and progress (the
//            marker of check_output.hpp) are made in it
//   --config CALLBACK=JSON   a callback's plugin_config section (repeatable)
//   --readme FILE            the README whose "| key |" table is checked
//   --step_budget_ms X, --event_budget_ms X   event_time's budgets
//   --parent PID             ends itself when that process dies
// stdin: the command's record token (check_output.hpp), read before anything
// else and replaced with /dev/null (run it by hand with `echo T | ...`).
// Results go to fd 3, one JSON line each, the group's end line last; the
// library's own output goes to stdout/stderr. It never returns from main:
// _exit, so that the library's destructors and atexit handlers run in no
// half-torn process.
#include "checks.hpp"

#include "../registry/plugin_file.hpp"
#include "../registry/plugin_file_checks.hpp"

#include <trainhook/testkit/plugin_driver.hpp>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

namespace {

namespace check = trainhook::plugin_check;

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "trainhook-plugin-check: %s\nusage: trainhook-plugin-check entry|events|hostile|timing|memory "
               "LIBRARY FOLDER [--config CALLBACK=JSON]... [--readme FILE] [--step_budget_ms X] "
               "[--event_budget_ms X] [--parent PID]\n",
               why);
  ::_exit(2);
}

double positive(const char* flag, const char* text) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(v > 0)) usage((std::string(flag) + " needs a number above 0").c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (!check::take_token()) {
    std::fprintf(stderr, "trainhook-plugin-check: cannot read the record token from stdin: %s\n",
                 std::strerror(errno));
    ::_exit(3);
  }
  if (argc < 4) usage("too few arguments");
  const std::string group = argv[1];
  check::CheckContext ctx;
  ctx.library = argv[2];
  const std::filesystem::path folder = argv[3];
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage((a + " needs a value").c_str());
    const std::string v = argv[++i];
    if (a == "--config") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos) usage("--config takes CALLBACK=JSON");
      ctx.configs[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "--readme") {
      ctx.readme = v;
    } else if (a == "--step_budget_ms") {
      ctx.step_budget_ms = positive("--step_budget_ms", v.c_str());
    } else if (a == "--event_budget_ms") {
      ctx.event_budget_ms = positive("--event_budget_ms", v.c_str());
    } else if (a == "--parent") {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != static_cast<pid_t>(std::strtol(v.c_str(), nullptr, 10))) ::_exit(4);
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  // Orphans of the library's children come back to this process, where the
  // footprint check sees them.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::error_code ec;
  ctx.cwd = std::filesystem::absolute(folder / "cwd", ec).string();
  ctx.output_dir = std::filesystem::absolute(folder / "output_dir", ec).string();
  std::filesystem::create_directories(ctx.cwd, ec);
  std::filesystem::create_directories(ctx.output_dir, ec);
  if (ec || ::chdir(ctx.cwd.c_str()) != 0) {
    std::fprintf(stderr, "trainhook-plugin-check: cannot prepare %s: %s\n", folder.c_str(),
                 ec ? ec.message().c_str() : std::strerror(errno));
    ::_exit(3);
  }
  try {
    ctx.progress.open((folder / "progress").string());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trainhook-plugin-check: %s\n", e.what());
    ::_exit(3);
  }
  ctx.before = check::ProcessSnapshot::take();

  // Loaded as the trainer loads it (registry/plugin_loader.cpp): the file is
  // opened once, the ELF pre-check reads that descriptor, what it needs
  // beside it through $ORIGIN is loaded first, and dlopen loads the
  // descriptor itself (/proc/self/fd/N). Loaded (and the descriptor open) for
  // the life of the process: never unloaded, so a thread the library left
  // running cannot run into unmapped code while it is judged.
  testkit::Library* library = nullptr;
  ctx.progress.enter("(library)", "load", 0);
  auto* file = new trainhook::detail::PluginFile(ctx.library);
  file->keep_open_for_process();
  std::string problem = file->is_open()
                            ? trainhook::detail::elf_problem(file->proc_path(), TRAINHOOK_ENTRY_SYMBOL)
                            : file->problem();
  if (problem.empty()) problem = file->load_origin_dependencies();
  if (problem.empty()) {
    try {
      library = new testkit::Library(file->proc_path());
    } catch (const std::exception& e) {
      // The loader names the file by the name it was given: show the file's own.
      problem = e.what();
      const std::string opened = file->proc_path();
      for (size_t at = problem.find(opened); at != std::string::npos; at = problem.find(opened, at + 1))
        problem.replace(at, opened.size(), ctx.library);
    }
  }
  if (library == nullptr) {
    ctx.progress.done();
    check::report("entry_table", check::Verdict::fail, "cannot be loaded: " + problem);
    check::end_group();
  }
  ctx.progress.done();
  ctx.info = &library->info();
  if (ctx.info->abi_major != TRAINHOOK_ABI_VERSION_MAJOR) {
    // The trainer refuses it (plugin_loader.cpp): nothing else of it ever runs.
    check::report("entry_table", check::Verdict::fail,
                  "cannot be loaded: ABI major version mismatch: the plugin was built for ABI " +
                      std::to_string(ctx.info->abi_major) + "." + std::to_string(ctx.info->abi_minor) +
                      ", this trainer speaks " + std::to_string(TRAINHOOK_ABI_VERSION_MAJOR) + "." +
                      std::to_string(TRAINHOOK_ABI_VERSION_MINOR));
    check::end_group();
  }

  if (group == "entry") {
    check::check_entry_table(ctx);
    check::check_config_keys(ctx);
  } else if (group == "events") {
    check::check_events(ctx);
    check::check_process_footprint(ctx);
  } else if (group == "hostile") {
    check::check_hostile_inputs(ctx);
  } else if (group == "timing") {
    check::check_event_time(ctx);
  } else if (group == "memory") {
    check::check_memory_growth(ctx);
  } else {
    usage(("unknown group " + group).c_str());
  }
  check::end_group();
}
