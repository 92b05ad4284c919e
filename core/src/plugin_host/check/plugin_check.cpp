// Runs the groups of `trainhook plugin check` (trainhook/plugin_host/
// plugin_check.hpp) in trainhook-plugin-check, one process per group, and
// turns what each wrote (and how it ended) into the report. Each runs as the
// scanner does (isolation/helper_process): a process group of its own, killed
// whole when the group ends, so nothing the library started outlives its check.
#include <trainhook/plugin_host/check/plugin_check.hpp>

#include "../isolation/helper_executable.hpp"
#include "../isolation/helper_process.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/signal_name.hpp>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace trainhook {
namespace fs = std::filesystem;

namespace {

constexpr int kResultFd = 3;
constexpr size_t kOutputTail = 1500;
constexpr size_t kMaxAnswer = size_t{4} << 20;

struct CheckId {
  const char* id;
  const char* title;
  const char* group;
};

// The order of the report; the group whose helper writes each.
const CheckId kPluginChecks[] = {
    {"entry_table", "the entry table", "entry"},
    {"config_keys", "plugin_config keys", "entry"},
    {"readme_table", "README key table", "entry"},
    {"events", "events in Hugging Face order", "events"},
    {"observe_only", "events declared observe-only", "events"},
    {"resume", "resume from saved state", "events"},
    {"hostile_inputs", "hostile but legal inputs", "hostile"},
    {"exceptions", "exceptions across the C ABI", ""},
    {"files_in_cwd", "files left in the working directory", "events"},
    {"threads_left", "threads left after destroy", "events"},
    {"child_processes", "child processes left after destroy", "events"},
    {"signal_handlers", "signal handlers", "events"},
    {"std_descriptors", "standard descriptors", "events"},
    {"working_directory", "working directory", "events"},
    {"event_time", "time per event", "timing"},
    {"memory_growth", "memory per step", "memory"},
};
const char* const kGroups[] = {"entry", "events", "hostile", "timing", "memory"};

CheckVerdict verdict_of(const std::string& s) {
  if (s == "PASS") return CheckVerdict::pass;
  if (s == "WARN") return CheckVerdict::warn;
  if (s == "SKIP") return CheckVerdict::skip;
  return CheckVerdict::fail;
}

struct GroupRun {
  std::vector<nlohmann::json> lines;
  std::string output;  // the tail of what the library printed
  int status = 0;
  bool timed_out = false;
  bool in_call = false;  // the progress marker: a plugin call was under way
  std::string where;     // and which
};

GroupRun run_group(const fs::path& helper, const std::string& group, const fs::path& folder,
                   const PluginCheckOptions& o) {
  fs::create_directories(folder);
  std::vector<std::string> args = {helper.string(), group, o.library.string(), folder.string()};
  for (const auto& [name, json] : o.configs) {
    args.push_back("--config");
    args.push_back(name + "=" + json);
  }
  if (!o.readme.empty()) {
    args.push_back("--readme");
    args.push_back(o.readme.string());
  }
  args.push_back("--step_budget_ms");
  args.push_back(std::to_string(o.step_budget_ms));
  args.push_back("--event_budget_ms");
  args.push_back(std::to_string(o.event_budget_ms));
  args.push_back("--parent");
  args.push_back(std::to_string(::getpid()));
  detail::HelperCall call;
  call.argv = std::move(args);
  call.purpose = "the plugin check";
  call.result_fd = kResultFd;
  call.max_answer = kMaxAnswer;
  call.output_tail = kOutputTail;
  call.limit = o.group_time_limit;
  detail::HelperRun helper_run = detail::run_helper(call);
  GroupRun run;
  run.output = std::move(helper_run.output);
  run.status = helper_run.status;
  run.timed_out = helper_run.timed_out;
  const std::string& answer = helper_run.answer;

  std::istringstream lines(answer);
  std::string line;
  while (std::getline(lines, line)) {
    try {
      run.lines.push_back(nlohmann::json::parse(line));
    } catch (const std::exception&) {
      // A line cut short by a crash: the missing result says what happened.
    }
  }
  std::ifstream progress(folder / "progress", std::ios::binary);
  std::string marker((std::istreambuf_iterator<char>(progress)), std::istreambuf_iterator<char>());
  if (!marker.empty()) {
    run.in_call = marker[0] == '1';
    run.where = std::string(marker.c_str() + 1);
  }
  return run;
}

std::string output_tail(const std::string& output) {
  std::string t = output;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t.empty() ? "" : "\n  its last output: " + t;
}

}  // namespace

bool PluginCheckReport::failed() const {
  return std::any_of(results.begin(), results.end(),
                     [](const auto& r) { return r.verdict == CheckVerdict::fail; });
}

const char* verdict_name(CheckVerdict v) {
  switch (v) {
    case CheckVerdict::pass:
      return "PASS";
    case CheckVerdict::warn:
      return "WARN";
    case CheckVerdict::fail:
      return "FAIL";
    case CheckVerdict::skip:
      return "SKIP";
  }
  return "FAIL";
}

PluginCheckReport run_plugin_check(const PluginCheckOptions& options) {
  const fs::path helper = detail::helper_executable("trainhook-plugin-check");
  PluginCheckOptions o = options;
  // The helper works in a folder of its own: paths must not depend on ours.
  o.library = fs::absolute(o.library).lexically_normal();
  if (!o.readme.empty()) o.readme = fs::absolute(o.readme).lexically_normal();
  const fs::path tmp = [] {
    const char* t = std::getenv("TMPDIR");
    return fs::path(t != nullptr && *t != '\0' ? t : "/tmp");
  }();
  std::string templ = (tmp / "trainhook-plugin-check-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    throw PluginError("cannot create a temporary folder in " + tmp.string() + ": " + std::strerror(errno));

  PluginCheckReport report;
  report.folder = templ;
  std::map<std::string, PluginCheckResult> found;
  auto take = [&](const nlohmann::json& line) {
    PluginCheckResult r;
    r.id = line.value("check", "");
    r.verdict = verdict_of(line.value("verdict", "FAIL"));
    r.detail = line.value("detail", "");
    auto it = found.find(r.id);
    if (it == found.end()) {
      found[r.id] = r;
      return;
    }
    // Several reports of one check (an exception in two groups): the worst, every detail.
    if (r.verdict == CheckVerdict::fail) it->second.verdict = CheckVerdict::fail;
    if (("\n" + it->second.detail + "\n").find("\n" + r.detail + "\n") == std::string::npos)
      it->second.detail += "\n" + r.detail;
  };

  bool loadable = true;
  bool all_ended = true;  // every group ran to its end
  for (const char* group : kGroups) {
    if (!loadable) break;
    const GroupRun run = run_group(helper, group, report.folder / group, o);
    for (const auto& line : run.lines) take(line);
    if (group == std::string("entry")) {
      const auto it = found.find("entry_table");
      loadable = it != found.end() && it->second.detail.rfind("cannot be loaded", 0) != 0;
    }
    // The group's checks that wrote nothing: how the helper ended says why.
    std::vector<std::string> missing;
    for (const auto& c : kPluginChecks)
      if (c.group == std::string(group) && found.count(c.id) == 0 &&
          !(c.id == std::string("readme_table") && o.readme.empty()) &&
          !(c.id != std::string("entry_table") && !loadable))
        missing.push_back(c.id);
    if (missing.empty()) continue;
    all_ended = false;
    const std::string where = run.where.empty() ? "" : " in " + run.where;
    std::string why;
    bool exception = false;
    if (run.timed_out) {
      why = "no answer within " + std::to_string(o.group_time_limit.count() / 1000) + " s: hung" + where +
            " (--timeout sets the limit)";
    } else if (WIFSIGNALED(run.status)) {
      const int sig = WTERMSIG(run.status);
      exception = sig == SIGABRT && run.in_call;
      why = "killed by " + signal_name(sig) + where +
            (exception
                 ? ": std::terminate, the way a C++ exception thrown across the C ABI (through a noexcept "
                   "frame) ends the process"
                 : "");
    } else {
      why = "the helper exited with status " +
            std::to_string(WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1) + where +
            (run.in_call ? " (the plugin ended the process)" : "");
    }
    why += output_tail(run.output);
    if (exception) take(nlohmann::json{{"check", "exceptions"}, {"verdict", "FAIL"}, {"detail", why}});
    for (size_t i = 0; i < missing.size(); ++i)
      found[missing[i]] =
          PluginCheckResult{missing[i], "", i == 0 && !exception ? CheckVerdict::fail : CheckVerdict::skip,
                            i == 0 ? why : "not run: the group stopped at " + missing[0]};
  }
  if (loadable && found.count("exceptions") == 0)
    found["exceptions"] = PluginCheckResult{
        "exceptions", "", CheckVerdict::pass,
        all_ended ? "none crossed in any group" : "none crossed in the calls made before the groups stopped"};

  for (const auto& c : kPluginChecks) {
    auto it = found.find(c.id);
    if (it == found.end()) {
      if (c.id == std::string("readme_table")) continue;
      report.results.push_back(
          PluginCheckResult{c.id, c.title, CheckVerdict::skip, "not run: the library cannot be loaded"});
      continue;
    }
    it->second.title = c.title;
    report.results.push_back(it->second);
  }
  if (!o.keep_folder) {
    std::error_code ec;
    fs::remove_all(report.folder, ec);
  }
  return report;
}

}  // namespace trainhook
