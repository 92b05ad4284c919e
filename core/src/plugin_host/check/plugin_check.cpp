// Runs the groups of `trainhook plugin check` (trainhook/plugin_host/
// plugin_check.hpp) in trainhook-plugin-check, one process per group, and
// turns what each wrote (and how it ended) into the report. Each runs as the
// scanner does (isolation/helper_process): a process group of its own, killed
// whole when the group ends, so nothing the library started outlives its check.
//
// The verdicts are this file's, never the plugin's (pluginval's model). The
// helper shares its process with the plugin, so whatever the helper can write
// on its result channel (fd 3, a number easy to guess), the plugin can write
// too; what it cannot do is:
//  - know the run's token: 16 random bytes drawn here, given to each helper on
//    its stdin, which the helper reads and replaces with /dev/null before it
//    loads the library (check_output.hpp). A line counts only if it carries
//    the token and names a check of the group this file started it for; any
//    other line on the channel is foreign and fails the group.
//  - change how the helper ended, as waitpid sees it here: a group's answers
//    stand only if the helper wrote its end line and exited 0. A helper killed
//    by a signal, or gone without its end line (a plugin's exit), fails the
//    group whatever it wrote: the first check it did not answer FAILs with the
//    cause (the group's first check when every one answered).
// The token is in the helper's memory while the plugin runs: a plugin that
// searches its host's memory for it is beyond this; one that writes PASS
// lines onto a descriptor it guessed, then crashes or exits, fails.
#include <trainhook/plugin_host/check/plugin_check.hpp>

#include "../isolation/helper_executable.hpp"
#include "../isolation/helper_process.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/signal_name.hpp>

#include <nlohmann/json.hpp>

#include <signal.h>
#include <sys/random.h>
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

// 16 random bytes in hex: the run's record token.
std::string new_token() {
  unsigned char bytes[16];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw PluginError(std::string("the plugin check cannot draw its token: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) {
    hex += "0123456789abcdef"[b >> 4];
    hex += "0123456789abcdef"[b & 15];
  }
  return hex;
}

bool in_group(const std::string& id, const std::string& group) {
  if (id == "exceptions") return true;  // any group's calls may let one cross
  return std::any_of(std::begin(kPluginChecks), std::end(kPluginChecks),
                     [&](const CheckId& c) { return id == c.id && group == c.group; });
}

std::string text_field(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

struct GroupRun {
  std::vector<nlohmann::json> lines;  // the helper's own: its token, a check of the group
  size_t foreign = 0;                 // lines that were not
  bool ended = false;                 // the helper's end line came
  std::string output;                 // the tail of what the library printed
  int status = 0;
  bool timed_out = false;
  bool in_call = false;  // the progress marker: a plugin call was under way
  std::string where;     // and which

  // The helper wrote its end line and exited 0, and no one else wrote on its channel.
  bool ended_as_asked() const {
    return ended && foreign == 0 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
};

GroupRun run_group(const fs::path& helper, const std::string& group, const fs::path& folder,
                   const PluginCheckOptions& o, const std::string& token) {
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
  call.input = token + "\n";
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
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    // Nothing counts after the end line: the helper writes none.
    if (run.ended || !j.is_object() || text_field(j, "token") != token) {
      ++run.foreign;
    } else if (j.contains("end")) {
      run.ended = true;
    } else if (!in_group(text_field(j, "check"), group)) {
      ++run.foreign;
    } else {
      run.lines.push_back(j);
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

  const std::string token = new_token();
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
    const GroupRun run = run_group(helper, group, report.folder / group, o, token);
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
    if (missing.empty() && run.ended_as_asked()) continue;
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
    } else if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0 || !run.ended) {
      why = "the helper exited with status " +
            std::to_string(WIFEXITED(run.status) ? WEXITSTATUS(run.status) : -1) +
            (run.ended ? "" : " before the end of its group") + where +
            (run.in_call ? " (the plugin ended the process)" : "");
    }
    if (run.foreign > 0)
      why += (why.empty() ? "" : "; ") + std::to_string(run.foreign) +
             " line(s) on the checker's result channel (fd " + std::to_string(kResultFd) +
             ") were not the checker's: the plugin wrote onto a descriptor it did not open, and none of it "
             "counts";
    why += output_tail(run.output);
    if (exception) take(nlohmann::json{{"check", "exceptions"}, {"verdict", "FAIL"}, {"detail", why}});
    if (missing.empty()) {
      // Every check answered, yet the helper did not end as asked: its answers
      // do not stand alone, and the group's first check carries the cause.
      if (exception) continue;
      const auto first = std::find_if(std::begin(kPluginChecks), std::end(kPluginChecks),
                                      [&](const CheckId& c) { return group == std::string(c.group); });
      PluginCheckResult& r = found[first->id];
      r.verdict = CheckVerdict::fail;
      r.detail += "\nbut the group did not end as the checker asked: " + why;
      continue;
    }
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
