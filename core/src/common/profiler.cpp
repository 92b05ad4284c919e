#include <trainhook/common/profiler.hpp>

#include <nlohmann/json.hpp>

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>

namespace trainhook {
namespace {

std::atomic<uint64_t> g_generations{0};

// The calling thread's track in the profiler of a generation (a thread can
// outlive one profiler and record into the next).
struct ThreadTrack {
  uint64_t generation = 0;
  int track = -1;
};
thread_local ThreadTrack t_track;

int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string this_thread_name() {
  char name[64] = {0};
  if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || name[0] == '\0') return "thread";
  return name;
}

std::string seconds_text(double s, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, s);
  return buf;
}

}  // namespace

Profiler::Profiler(bool keep_spans, size_t max_spans)
    : keep_spans_(keep_spans),
      max_spans_(max_spans),
      origin_(Clock::now()),
      origin_unix_us_(unix_now_us()),
      generation_(g_generations.fetch_add(1) + 1) {}

int Profiler::action(std::string_view name) {
  const std::lock_guard<std::mutex> lock(mu_);
  const auto [it, added] = ids_.try_emplace(std::string(name), static_cast<int>(names_.size()));
  if (added) {
    names_.emplace_back(name);
    totals_.emplace_back();
  }
  return it->second;
}

int Profiler::track_of_this_thread() {
  if (t_track.generation != generation_) {
    t_track.generation = generation_;
    t_track.track = static_cast<int>(tracks_.size());
    tracks_.push_back(this_thread_name());
  }
  return t_track.track;
}

void Profiler::name_this_thread(const std::string& name) {
  const std::lock_guard<std::mutex> lock(mu_);
  tracks_[static_cast<size_t>(track_of_this_thread())] = name;
}

void Profiler::record(int action, Clock::time_point start, Clock::time_point end) {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
  const std::lock_guard<std::mutex> lock(mu_);
  if (action < 0 || static_cast<size_t>(action) >= totals_.size()) return;
  Totals& t = totals_[static_cast<size_t>(action)];
  t.min_ns = t.calls == 0 ? ns : std::min(t.min_ns, ns);
  t.max_ns = t.calls == 0 ? ns : std::max(t.max_ns, ns);
  ++t.calls;
  t.total_ns += ns;
  if (!keep_spans_) return;
  if (spans_.size() >= max_spans_) {
    ++spans_left_out_;
    return;
  }
  spans_.push_back(Span{action, track_of_this_thread(),
                        std::chrono::duration_cast<std::chrono::nanoseconds>(start - origin_).count(), ns});
}

nlohmann::json Profiler::summary(std::chrono::nanoseconds run) const {
  const std::lock_guard<std::mutex> lock(mu_);
  std::vector<size_t> order;
  for (size_t i = 0; i < totals_.size(); ++i)
    if (totals_[i].calls > 0) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return totals_[a].total_ns > totals_[b].total_ns; });
  const double run_s = static_cast<double>(run.count()) * 1e-9;
  nlohmann::json rows = nlohmann::json::array();
  for (const size_t i : order) {
    const Totals& t = totals_[i];
    const double total_s = static_cast<double>(t.total_ns) * 1e-9;
    rows.push_back({{"action", names_[i]},
                    {"calls", t.calls},
                    {"mean_s", total_s / static_cast<double>(t.calls)},
                    {"min_s", static_cast<double>(t.min_ns) * 1e-9},
                    {"max_s", static_cast<double>(t.max_ns) * 1e-9},
                    {"total_s", total_s},
                    {"percent", run_s > 0 ? 100.0 * total_s / run_s : 0.0}});
  }
  return {{"run_s", run_s}, {"actions", std::move(rows)}};
}

std::string Profiler::table(const nlohmann::json& summary, const std::string& title) {
  std::vector<std::array<std::string, 5>> rows;
  rows.push_back({"Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %"});
  rows.push_back({"Total", "-", "-", seconds_text(summary.at("run_s").get<double>(), 5), "100 %"});
  for (const auto& a : summary.at("actions"))
    rows.push_back({a.at("action").get<std::string>(), seconds_text(a.at("mean_s").get<double>(), 6),
                    std::to_string(a.at("calls").get<uint64_t>()), seconds_text(a.at("total_s").get<double>(), 5),
                    seconds_text(a.at("percent").get<double>(), 2) + " %"});
  std::array<size_t, 5> width{};
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  size_t line_width = 1;
  for (const size_t w : width) line_width += w + 5;
  const std::string rule(line_width, '-');
  std::string out = title + "\n" + rule + "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out += "|";
    for (size_t c = 0; c < rows[i].size(); ++c) {
      const std::string& cell = rows[i][c];
      out += "  " + cell + std::string(width[c] - cell.size(), ' ') + "  |";
    }
    out += "\n";
    if (i == 0 || i == 1) out += rule + "\n";
  }
  out += rule + "\n";
  return out;
}

nlohmann::json Profiler::trace_events(int pid, const std::string& process_name) const {
  const std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0},
                    {"args", {{"name", process_name}}}});
  for (size_t t = 0; t < tracks_.size(); ++t)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", t},
                      {"args", {{"name", tracks_[t]}}}});
  for (const Span& s : spans_) {
    // Microseconds with the nanoseconds kept as a fraction (the format's unit).
    events.push_back({{"name", names_[static_cast<size_t>(s.action)]},
                      {"ph", "X"},
                      {"pid", pid},
                      {"tid", s.track},
                      {"ts", static_cast<double>(origin_unix_us_) + static_cast<double>(s.start_ns) * 1e-3},
                      {"dur", static_cast<double>(s.duration_ns) * 1e-3}});
  }
  return events;
}

size_t Profiler::spans_left_out() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return spans_left_out_;
}

}  // namespace trainhook
