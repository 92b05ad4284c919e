// trainhook plugins [--plugin_dir D]... [--allow_unsafe_plugin_paths]
// Lists every plugin library found in search order, what each exports, and why
// any file was refused. Duplicates are shown (not fatal) so they can be fixed.
// Exits 1 when a file on the path was refused, so CI can catch a broken pack.
//
// trainhook plugins lock [--plugin_dir D]... [PATH]...
// Prints the TRAINHOOK_PLUGIN_LOCK lines ("<sha256>  <file name>") of the
// plugin libraries given (files or folders), or of every one on the search
// path but the trainer's own (covered by their installed digests): what a pack
// ships and a site appends to its lock (trainhook/plugin_host/registry/plugin_lock.hpp).
#include <trainhook/cli/commands.hpp>
#include <trainhook/common/closest_name.hpp>
#include <trainhook/plugin_host/registry/plugin_lock.hpp>
#include <trainhook/plugin_host/registry/plugin_registry.hpp>
#include <trainhook/plugin_host/selection/isolation_policy.hpp>
#include <trainhook/plugin_host/selection/site_config.hpp>
#include <trainhook/strings.hpp>

#include <spdlog/spdlog.h>

#include <cstdio>
#include <stdexcept>

namespace trainhook::cli {
namespace {

void plugins_usage(std::FILE* out) {
  std::fprintf(
      out,
      "usage: trainhook plugins [--plugin_dir DIR]... [--allow_unsafe_plugin_paths]\n"
      "                         [--plugin_isolation auto|none|NAME...]\n"
      "Lists the plugin libraries found (--plugin_dir folders, then TRAINHOOK_PLUGIN_PATH, then the\n"
      "default folder), their callbacks and commands, and the reason for every refused file; then\n"
      "whether a run would load each in process or isolated, and why (the site file, else\n"
      "--plugin_isolation auto). Exits 1 when a file on the search path was refused.\n"
      "\n"
      "usage: trainhook plugins lock [--plugin_dir DIR]... [PATH]...\n"
      "Prints a TRAINHOOK_PLUGIN_LOCK line (\"<sha256>  <file name>\") for each plugin library in PATH\n"
      "(files or folders), or for every one on the search path but the trainer's own plugins, which\n"
      "are checked against the digests installed with them. A name matches the library in any\n"
      "searched folder: a pack ships these lines, a site appends them to its lock file.\n");
}

// --plugin_dir DIR or --plugin_dir=DIR at args[i] (i then moves past a
// separate value): added to `options`; false for any other argument.
bool take_plugin_dir(const std::vector<std::string>& args, size_t& i, PluginSearchOptions& options) {
  const std::string& a = args[i];
  if (a == "--plugin_dir") {
    if (i + 1 >= args.size()) throw std::invalid_argument("--plugin_dir needs a folder");
    options.plugin_dirs.emplace_back(args[++i]);
    return true;
  }
  if (a.rfind("--plugin_dir=", 0) != 0) return false;
  options.plugin_dirs.emplace_back(a.substr(std::string("--plugin_dir=").size()));
  return true;
}

// The arguments both forms take at args[i]: --plugin_dir (added to `options`)
// and --help (the usage printed; the caller returns 0).
enum class CommonArgument { kOther, kPluginDir, kHelp };
CommonArgument take_common_argument(const std::vector<std::string>& args, size_t& i, PluginSearchOptions& options) {
  if (args[i] == "--help" || args[i] == "-h") {
    plugins_usage(stdout);
    return CommonArgument::kHelp;
  }
  return take_plugin_dir(args, i, options) ? CommonArgument::kPluginDir : CommonArgument::kOther;
}

[[noreturn]] void unknown_argument(const std::string& a, const std::vector<std::string>& known) {
  std::string msg = "unknown argument '" + a + "'";
  const std::string close = closest_name(a, known);
  if (!close.empty()) msg += " (did you mean '" + close + "'?)";
  throw std::invalid_argument(msg + "; see trainhook plugins --help");
}

// trainhook plugins lock ...
int lock_command(const std::vector<std::string>& args) {
  PluginSearchOptions options;
  std::vector<std::filesystem::path> paths;
  for (size_t i = 0; i < args.size(); ++i) {
    const CommonArgument common = take_common_argument(args, i, options);
    if (common == CommonArgument::kHelp) return 0;
    if (common == CommonArgument::kPluginDir) continue;
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0) unknown_argument(a, {"--plugin_dir", "--help"});
    paths.emplace_back(a);
  }
  const std::vector<PluginLockEntry> entries = plugin_lock_entries(paths, options);
  size_t own = 0;
  std::string lines;
  for (const auto& e : entries) {
    if (paths.empty() && e.trainers_own) {
      ++own;
      continue;
    }
    lines += e.line + "\n";
  }
  std::fputs(lines.c_str(), stdout);
  if (own > 0)
    std::fprintf(
        stderr,
        "trainhook plugins lock: %zu of the trainer's own plugin(s) left out: their installed digests "
        "(%s in the default folder) cover them\n",
        own, kTrainerPluginDigests);
  if (entries.empty()) std::fprintf(stderr, "trainhook plugins lock: no plugin library found\n");
  return entries.empty() ? 1 : 0;
}

// "in process" / "isolated" per accepted library under `policy`, with the reason.
std::string describe_isolation(const PluginRegistry& registry, const IsolationPolicy& policy) {
  std::string out = "\nIsolation under plugin_isolation " + policy.describe_mode() + ":\n";
  for (const auto& rec : registry.libraries()) {
    if (!rec.loaded) continue;
    // One decision per library: every callback it exports shares its trust
    // (only named mode tells callbacks apart).
    std::vector<std::string> isolated;
    std::vector<std::string> in_process;
    std::string why;
    for (const auto& cb : rec.callbacks) {
      const IsolationDecision d = policy.decide(cb.name, rec.path);
      (d.isolated ? isolated : in_process).push_back(cb.name);
      if (why.empty() || d.isolated) why = d.why;
    }
    if (rec.callbacks.empty()) why = policy.decide("", rec.path).why;
    out += "  " + rec.path.string() + ": ";
    if (policy.mode() == IsolationMode::named && !isolated.empty() && !in_process.empty())
      out += "isolated " + strings::join(isolated) + ", in process " + strings::join(in_process);
    else
      out += isolated.empty() ? "in process" : "isolated";
    out += " (" + why + ")\n";
  }
  return out;
}

}  // namespace

int plugins_command(const std::vector<std::string>& args, const std::string& /*program_path*/) {
  if (!args.empty() && args.front() == "lock")
    return lock_command(std::vector<std::string>(args.begin() + 1, args.end()));
  PluginSearchOptions options;
  options.allow_duplicate_plugins = true;  // listed with a DUPLICATE mark instead of failing
  std::vector<std::string> isolation_flag;
  for (size_t i = 0; i < args.size(); ++i) {
    const CommonArgument common = take_common_argument(args, i, options);
    if (common == CommonArgument::kHelp) return 0;
    if (common == CommonArgument::kPluginDir) continue;
    const std::string& a = args[i];
    if (a == "--plugin_isolation") {
      // Values up to the next flag, as the trainer's parser takes a list.
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) isolation_flag.push_back(args[++i]);
      if (isolation_flag.empty()) throw std::invalid_argument("--plugin_isolation needs auto, none or names");
      continue;
    }
    if (a != "--allow_unsafe_plugin_paths")
      unknown_argument(a, {"--plugin_dir", "--allow_unsafe_plugin_paths", "--plugin_isolation", "--help"});
    options.allow_unsafe_plugin_paths = true;
  }
  const SiteConfig site = load_site_config();
  // The listing already says what was loaded or refused; keep the log quiet.
  const auto level = spdlog::get_level();
  spdlog::set_level(spdlog::level::err);
  size_t refused = 0;
  try {
    const PluginRegistry registry(options);
    spdlog::set_level(level);
    std::fputs(registry.describe().c_str(), stdout);
    const IsolationPolicy policy(isolation_flag, site, default_plugin_dir(), registry.lock_file());
    std::fputs(describe_isolation(registry, policy).c_str(), stdout);
    for (const auto& rec : registry.libraries()) refused += rec.loaded ? 0 : 1;
  } catch (...) {
    spdlog::set_level(level);
    throw;
  }
  if (refused == 0) return 0;
  std::fprintf(stderr,
               "trainhook plugins: %zu plugin file(s) on the search path were refused (see REFUSED above)\n",
               refused);
  return 1;
}

}  // namespace trainhook::cli
