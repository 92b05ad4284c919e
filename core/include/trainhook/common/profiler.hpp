// Where the time of a run goes (--profile): named actions (a phase of the
// step, one callback's hook) timed on whatever thread runs them, summed per
// action for a table like Lightning's SimpleProfiler and profile.json, and
// kept as spans for a Chrome trace (--profile trace; Perfetto and
// chrome://tracing open it).
//
// Ownership: the Trainer owns one Profiler per run when --profile is not none;
// without one nobody records anything (every caller checks for nullptr, so a
// run without --profile pays a branch, not a clock read).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trainhook {

class Profiler {
 public:
  using Clock = std::chrono::steady_clock;

  // keep_spans: every timed call is also kept as a span for trace_events(),
  // up to max_spans (then only counted, and the trace says how many were left out).
  explicit Profiler(bool keep_spans, size_t max_spans = 2'000'000);

  // The id of an action by name, made on first use. Any thread.
  int action(std::string_view name);
  // One call of `action` from start to end, on the calling thread. Any thread.
  void record(int action, Clock::time_point start, Clock::time_point end);
  // Names the calling thread's track in the trace (else the thread's own
  // name, as pthread_getname_np gives it).
  void name_this_thread(const std::string& name);

  // The summary per action (calls, total, mean, min, max, share of `run`):
  // the rows of profile.json, biggest total first.
  nlohmann::json summary(std::chrono::nanoseconds run) const;
  // The Lightning-style table of summary(): action, mean, calls, total,
  // percentage; `title` above it.
  static std::string table(const nlohmann::json& summary, const std::string& title);
  // Complete ("ph": "X") events of every kept span and the track names ("M"
  // events), `pid` for all: a rank's part of a Chrome trace.
  nlohmann::json trace_events(int pid, const std::string& process_name) const;
  size_t spans_left_out() const;

 private:
  struct Totals {
    uint64_t calls = 0;
    int64_t total_ns = 0;
    int64_t min_ns = 0;
    int64_t max_ns = 0;
  };
  struct Span {
    int action;
    int track;
    int64_t start_ns;  // since origin_
    int64_t duration_ns;
  };
  int track_of_this_thread();  // mu_ held

  const bool keep_spans_;
  const size_t max_spans_;
  // Trace timestamps are wall-clock microseconds (ranks on different
  // machines line up as far as their clocks agree), measured on the steady clock.
  const Clock::time_point origin_;
  const int64_t origin_unix_us_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, int> ids_;
  std::vector<std::string> names_;
  std::vector<Totals> totals_;
  std::vector<Span> spans_;
  size_t spans_left_out_ = 0;
  std::vector<std::string> tracks_;  // a name per thread that recorded, in order of first record
  uint64_t generation_;              // tells this profiler's thread-local track cache from another's
};

// Times the enclosing scope as one call of an action; does nothing without a profiler.
class ProfileScope {
 public:
  ProfileScope(Profiler* profiler, int action) : profiler_(profiler), action_(action) {
    if (profiler_ != nullptr) start_ = Profiler::Clock::now();
  }
  ~ProfileScope() {
    if (profiler_ != nullptr) profiler_->record(action_, start_, Profiler::Clock::now());
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profiler* profiler_;
  int action_;
  Profiler::Clock::time_point start_;
};

}  // namespace trainhook
