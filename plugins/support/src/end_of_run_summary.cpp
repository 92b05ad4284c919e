#include <trainhook/support/end_of_run_summary.hpp>

#include <trainhook/plugin.hpp>

namespace trainhook::support {
namespace {

// The first line of a (possibly multi-line) reason, so the summary stays one line.
std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  if (end == std::string::npos) return text;
  return text.substr(0, end) + " ...";
}

}  // namespace

std::string format_end_of_run(const EndOfRunSummary& s) {
  const std::string status = s.status.empty() ? std::string("FINISHED") : s.status;
  std::string line = s.integration;
  if (s.run.empty()) {
    line += " run not created";
    if (!s.no_run_reason.empty()) line += " (" + first_line(s.no_run_reason) + ")";
    line += "; training " + status;
  } else {
    line += " run " + s.run + " " + status;
  }
  if (!s.failure.empty() && status != "FINISHED") line += " (" + first_line(s.failure) + ")";
  line += ": " + std::to_string(s.delivered) + " " + s.unit + " delivered, " + std::to_string(s.spooled) +
          " spooled";
  if (s.spooled > 0) {
    if (!s.spool_path.empty()) line += " in " + s.spool_path;
    line +=
        "; send them later: " + (s.resend.empty() ? std::string("no way to resend them is known") : s.resend);
  }
  if (s.lost > 0) {
    line += "; " + std::to_string(s.lost) + " lost";
    if (!s.lost_reason.empty()) line += " (" + first_line(s.lost_reason) + ")";
  }
  if (!s.note.empty()) line += "; " + s.note;
  return line;
}

std::string describe_failure(const th_failure& f) {
  return std::string(trainhook::failure_kind_name(f.kind)) + " at step " + std::to_string(f.step) + ": " +
         (f.message != nullptr ? f.message : "");
}

std::string describe_run_end(const RunEnd& end) {
  if (!end.failure_kind.empty())
    return end.failure_kind + (end.step >= 0 ? " at step " + std::to_string(end.step) : std::string()) +
           ": " + end.message;
  return end.reason();
}

const char* run_status_name(RunOutcome outcome) noexcept {
  switch (outcome) {
    case RunOutcome::failed:
      return "FAILED";
    case RunOutcome::killed:
      return "KILLED";
    case RunOutcome::finished:
      break;
  }
  return "FINISHED";
}

bool end_of_run_needs_attention(const EndOfRunSummary& s) noexcept {
  return s.run.empty() || s.spooled > 0 || s.lost > 0 || (!s.status.empty() && s.status != "FINISHED");
}

const char* run_outcome_name(RunOutcome outcome) noexcept {
  switch (outcome) {
    case RunOutcome::failed:
      return "failed";
    case RunOutcome::killed:
      return "killed";
    case RunOutcome::finished:
      break;
  }
  return "finished";
}

std::string queue_full_reason(uint64_t dropped, uint64_t capacity, std::string_view setting) {
  std::string reason = std::to_string(dropped) + " dropped because the queue of " + std::to_string(capacity) +
                       " records was full";
  if (!setting.empty()) reason.append("; raise ").append(setting);
  return reason;
}

void log_end_of_run(const Logger& log, const EndOfRunSummary& s, bool warn) {
  log_to(log, warn || end_of_run_needs_attention(s) ? LogLevel::warn : LogLevel::info, format_end_of_run(s));
}

}  // namespace trainhook::support
