#include "plugin_scan.hpp"

#include "library_record_json.hpp"

#include "../isolation/helper_process.hpp"

#include <trainhook/common/errors.hpp>
#include <trainhook/common/signal_name.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

namespace trainhook::detail {
namespace fs = std::filesystem;

namespace {

constexpr int kResultFd = 3;  // scanner_main.cpp writes its JSON there
constexpr size_t kOutputTail = 2000;
// More than any record the scanner writes; a result pipe that a library's
// process fills with more is cut there (the answer's end is then missing).
constexpr size_t kMaxAnswer = size_t{16} << 20;

std::string tail_of(const std::string& output) {
  std::string t = output.size() > kOutputTail ? output.substr(output.size() - kOutputTail) : output;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  return t.empty() ? "" : " (its output: " + t + ")";
}

}  // namespace

std::chrono::milliseconds scan_time_limit() {
  if (const char* env = std::getenv("TRAINHOOK_PLUGIN_SCAN_TIMEOUT"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(s) || s <= 0 || s > 3600)
      throw PluginError(std::string("TRAINHOOK_PLUGIN_SCAN_TIMEOUT is '") + env +
                        "': expected seconds, a number above 0 and at most 3600");
    return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
  }
  return std::chrono::seconds(10);
}

bool scan_in_helper(const fs::path& scanner, const fs::path& file, const FileIdentity& judged,
                    std::chrono::milliseconds limit, LibraryRecord& rec) {
  HelperCall call;
  call.argv = {scanner.string(), file.string(), std::to_string(::getpid()), judged.to_text()};
  call.purpose = "the plugin scanner";
  call.result_fd = kResultFd;
  call.max_answer = kMaxAnswer;
  call.output_tail = kOutputTail;
  call.limit = limit;
  // Until the scanner's answer (one line) has arrived or the scanner itself
  // exited (its pipes may stay open in a process the library forked).
  call.one_line_answer = true;
  const HelperRun run = run_helper(call);
  const std::string& json = run.answer;
  const std::string& printed = run.output;
  const bool timed_out = run.timed_out;
  const int status = run.status;

  rec.loaded = false;
  const std::string seconds =
      std::to_string(limit.count() / 1000) +
      (limit.count() % 1000 != 0 ? "." + std::to_string(limit.count() % 1000 / 100) : "");
  // A whole answer counts, however the scanner ended after writing it (it
  // exits at once; it may have been killed above before it got there).
  const size_t end = json.find('\n');
  if (end == std::string::npos) {
    if (timed_out) {
      rec.refused_reason =
          "did not answer within " + seconds +
          " s while loading (the scanner was killed; TRAINHOOK_PLUGIN_SCAN_TIMEOUT sets the limit)" +
          tail_of(printed);
      return true;
    }
    if (WIFSIGNALED(status)) {
      rec.refused_reason = "killed by " + signal_name(WTERMSIG(status)) + " while loading" + tail_of(printed);
      return false;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    rec.refused_reason = "exited with status " + std::to_string(code) + " while loading" + tail_of(printed);
    if (code == 0 && !json.empty())
      rec.refused_reason += " (its answer was cut short after " + std::to_string(json.size()) + " bytes)";
    return false;
  }
  try {
    record_from_json(nlohmann::json::parse(json.substr(0, end)), rec);
  } catch (const std::exception& e) {
    rec.loaded = false;
    rec.refused_reason = std::string("the scanner's answer could not be read: ") + e.what();
  }
  return false;
}

}  // namespace trainhook::detail
