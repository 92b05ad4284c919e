// CPU memory metrics per stage, like HF's TrainerMemoryTracker on CPU: the
// resident set size (RSS) at the start and end of a stage, and the peak during
// it. Adds <stage>_mem_cpu_alloc_delta (end - start) and
// <stage>_mem_cpu_peaked_delta (max(0, peak - end)), in bytes. Linux /proc;
// elsewhere it adds nothing. No LibTorch here.
#pragma once

#include <trainhook/trainer/metrics_io.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace trainhook {

// Current RSS in bytes, nullopt when /proc is unavailable.
std::optional<int64_t> current_rss_bytes();

class MemoryTracker {
 public:
  explicit MemoryTracker(bool enabled) : enabled_(enabled) {}
  // Starts a stage ("train", "eval", "test"); nested starts are ignored, as HF
  // ignores an evaluate() inside train().
  void start(const std::string& stage);
  // Ends `stage` if it is the running one and adds its metrics.
  void stop_and_update(const std::string& stage, Metrics& metrics);

 private:
  bool enabled_;
  std::string stage_;
  int64_t start_rss_ = 0;
};

}  // namespace trainhook
