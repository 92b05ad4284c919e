// trainhook plugin check LIBRARY [--plugin_config NAME.KEY=VALUE]... [--readme FILE]
//   [--step_budget_ms N] [--event_budget_ms N] [--timeout S] [--keep_folder]
// Checks one plugin library as a pack's CI would before shipping it
// (trainhook/plugin_host/check/plugin_check.hpp): one line per check, PASS, WARN,
// FAIL or SKIP, with what it found below. Exits 0 when nothing failed, 1 when
// a check failed, 2 on a usage error (naming the file or the argument).
#include <trainhook/cli/commands.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/plugin_host/check/plugin_check.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

namespace trainhook::cli {
namespace {

void check_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: trainhook plugin check LIBRARY [--plugin_config NAME.KEY=VALUE]... [--readme FILE]\n"
      "                              [--step_budget_ms N] [--event_budget_ms N] [--timeout S] "
      "[--keep_folder]\n"
      "Loads the plugin library in helper processes, in a fresh temporary folder, and checks it: its entry\n"
      "table and plugin_config keys (and the README's \"| key |\" table with --readme), every event in the\n"
      "Hugging Face order (two train() cycles, evaluate, save, predict, a resume from its saved state),\n"
      "hostile but legal inputs, and what it must not do: let exceptions cross the C ABI, write into the\n"
      "working directory, leave threads or processes after destroy, change signal handlers, the standard\n"
      "descriptors or the working directory (in any call, even if put back before it returns), take longer\n"
      "than the budget per event (mean per call: --step_budget_ms for per-step events, default 2;\n"
      "--event_budget_ms for the others, default 2000), or grow its memory step after step. A crash, an\n"
      "exit or a hang (--timeout seconds per group, default 120) fails the check it happened in, naming\n"
      "the event, whatever the plugin printed.\n"
      "--plugin_config NAME.KEY=VALUE gives callback NAME a key (a JSON value, or text).\n"
      "Exits 0 when no check failed (WARN does not fail), 1 when one did, 2 on a usage error.\n");
}

double number_arg(const std::string& flag, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || !(v > 0))
    throw std::invalid_argument(flag + " needs a number above 0, got '" + text + "'");
  return v;
}

void print_result(const PluginCheckResult& r) {
  std::printf("%s  %-18s %s\n", verdict_name(r.verdict), r.id.c_str(), r.title.c_str());
  size_t start = 0;
  while (start < r.detail.size()) {
    size_t end = r.detail.find('\n', start);
    if (end == std::string::npos) end = r.detail.size();
    std::printf("      %s\n", r.detail.substr(start, end - start).c_str());
    start = end + 1;
  }
}

int check_command(const std::vector<std::string>& args) {
  PluginCheckOptions o;
  std::map<std::string, nlohmann::json> sections;
  const std::vector<std::string> flags = {
      "--plugin_config", "--readme", "--step_budget_ms", "--event_budget_ms", "--timeout",
      "--keep_folder",   "--help"};
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      check_usage(stdout);
      return 0;
    }
    if (a == "--keep_folder") {
      o.keep_folder = true;
      continue;
    }
    if (a.rfind("--", 0) != 0) {
      if (!o.library.empty())
        throw std::invalid_argument("one LIBRARY at a time (got " + o.library.string() + " and " + a + ")");
      o.library = a;
      continue;
    }
    if (std::find(flags.begin(), flags.end(), a) == flags.end()) {
      std::string msg = "unknown argument '" + a + "'";
      const std::string close = closest_name(a, flags);
      if (!close.empty()) msg += " (did you mean '" + close + "'?)";
      throw std::invalid_argument(msg);
    }
    if (i + 1 >= args.size()) throw std::invalid_argument(a + " needs a value");
    const std::string& v = args[++i];
    if (a == "--plugin_config") {
      const size_t dot = v.find('.');
      const size_t eq = v.find('=');
      if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot == 0 || eq == dot + 1)
        throw std::invalid_argument("--plugin_config takes NAME.KEY=VALUE, got '" + v + "'");
      const std::string value = v.substr(eq + 1);
      nlohmann::json parsed = nlohmann::json::parse(value, nullptr, false);
      sections[v.substr(0, dot)][v.substr(dot + 1, eq - dot - 1)] =
          parsed.is_discarded() ? nlohmann::json(value) : parsed;
    } else if (a == "--readme") {
      o.readme = v;
    } else if (a == "--step_budget_ms") {
      o.step_budget_ms = number_arg(a, v);
    } else if (a == "--event_budget_ms") {
      o.event_budget_ms = number_arg(a, v);
    } else if (a == "--timeout") {
      o.group_time_limit = std::chrono::milliseconds(static_cast<int64_t>(number_arg(a, v) * 1000));
    }
  }
  if (o.library.empty())
    throw std::invalid_argument("which plugin library? (trainhook plugin check LIBRARY)");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(o.library, ec))
    throw std::invalid_argument(o.library.string() + ": no such file");
  if (!o.readme.empty() && !std::filesystem::is_regular_file(o.readme, ec))
    throw std::invalid_argument(o.readme.string() + ": no such file (--readme)");
  for (const auto& [name, section] : sections) o.configs[name] = section.dump();

  std::printf("trainhook plugin check %s\n", o.library.c_str());
  std::fflush(stdout);
  const PluginCheckReport report = run_plugin_check(o);
  size_t counts[4] = {0, 0, 0, 0};
  for (const auto& r : report.results) {
    print_result(r);
    ++counts[static_cast<int>(r.verdict)];
  }
  std::printf("plugin check: %zu PASS, %zu WARN, %zu FAIL, %zu SKIP%s\n", counts[0], counts[1], counts[2],
              counts[3], o.keep_folder ? (" (folder kept: " + report.folder.string() + ")").c_str() : "");
  return report.failed() ? 1 : 0;
}

}  // namespace

int plugin_command(const std::vector<std::string>& args, const std::string& /*program_path*/) {
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    check_usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args.front() != "check") {
    std::fprintf(stderr, "trainhook plugin: unknown subcommand '%s' (trainhook plugin check LIBRARY)\n",
                 args.front().c_str());
    return 2;
  }
  try {
    return check_command(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "trainhook plugin check: %s\n", e.what());
    return 2;
  }
}

}  // namespace trainhook::cli
