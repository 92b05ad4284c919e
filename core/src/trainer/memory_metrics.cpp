// RSS from /proc/self/statm; the peak from VmHWM in /proc/self/status, reset at
// the start of a stage by writing 5 to /proc/self/clear_refs (Linux >= 4.0).
#include <trainhook/trainer/memory_metrics.hpp>

#include <unistd.h>
#include <algorithm>
#include <fstream>
#include <sstream>

namespace trainhook {
namespace {

std::optional<int64_t> peak_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      int64_t kb = 0;
      if (fields >> kb) return kb * 1024;
    }
  }
  return std::nullopt;
}

void reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (out) out << "5";
}

}  // namespace

std::optional<int64_t> current_rss_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  if (!(in >> size >> resident)) return std::nullopt;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void MemoryTracker::start(const std::string& stage) {
  if (!enabled_ || !stage_.empty()) return;
  const auto rss = current_rss_bytes();
  if (!rss) return;
  stage_ = stage;
  start_rss_ = *rss;
  reset_peak_rss();
}

void MemoryTracker::stop_and_update(const std::string& stage, Metrics& metrics) {
  if (!enabled_ || stage_ != stage) return;
  stage_.clear();
  const auto end = current_rss_bytes();
  if (!end) return;
  const int64_t peak = std::max(peak_rss_bytes().value_or(*end), *end);
  metrics[stage + "_mem_cpu_alloc_delta"] = static_cast<double>(*end - start_rss_);
  metrics[stage + "_mem_cpu_peaked_delta"] = static_cast<double>(std::max<int64_t>(0, peak - *end));
}

}  // namespace trainhook
