// The arithmetic of the throughput callback, free of the ABI so the unit
// tests check it directly: a sliding window over the last window_size
// optimizer steps (Composer's SpeedMonitor keeps window_size + 1 time stamps
// and reports over the window_size batches between them), each step described
// by cumulative counters at its STEP_END.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainhook::throughput {

// Cumulative amounts at the end of one optimizer step, over all ranks.
struct StepMark {
  double seconds = 0;  // steady clock, with time spent in evaluation taken out
  double samples = 0;
  double tokens = 0;  // 0 throughout: tokens are not counted
  double flops = 0;   // 0 throughout: FLOPs are not counted
};

struct WindowSettings {
  int world_size = 1;
  std::optional<double> peak_flops;  // per device, FLOPs/s: adds throughput/device/mfu
};

class ThroughputWindow {
 public:
  explicit ThroughputWindow(size_t window_size);

  void add(const StepMark& mark);
  void clear() { marks_.clear(); }
  // window_size steps are in the window.
  bool full() const noexcept { return marks_.size() == window_size_ + 1; }
  size_t window_size() const noexcept { return window_size_; }

  // Composer's names over the window: throughput/{batches,samples,tokens,
  // flops}_per_sec and their throughput/device/... shares (÷ world_size), and
  // throughput/device/mfu with a peak. Tokens and FLOPs only when they grew in
  // the window. Empty when the window is not full or no time passed.
  std::vector<std::pair<std::string, double>> metrics(const WindowSettings& s) const;

 private:
  size_t window_size_;
  std::deque<StepMark> marks_;
};

}  // namespace trainhook::throughput
