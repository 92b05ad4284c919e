#include <trainhook/throughput/throughput_window.hpp>

#include <algorithm>
#include <stdexcept>

namespace trainhook::throughput {

ThroughputWindow::ThroughputWindow(size_t window_size) : window_size_(window_size) {
  if (window_size_ < 1) throw std::invalid_argument("ThroughputWindow: window_size must be at least 1");
}

void ThroughputWindow::add(const StepMark& mark) {
  marks_.push_back(mark);
  while (marks_.size() > window_size_ + 1) marks_.pop_front();
}

std::vector<std::pair<std::string, double>> ThroughputWindow::metrics(const WindowSettings& s) const {
  std::vector<std::pair<std::string, double>> out;
  if (!full()) return out;
  const StepMark& a = marks_.front();
  const StepMark& b = marks_.back();
  const double secs = b.seconds - a.seconds;
  if (!(secs > 0)) return out;
  const double devices = static_cast<double>(std::max(1, s.world_size));
  // Composer's names; built once (this runs on every logging step).
  static const std::string kNames[][2] = {
      {"throughput/batches_per_sec", "throughput/device/batches_per_sec"},
      {"throughput/samples_per_sec", "throughput/device/samples_per_sec"},
      {"throughput/tokens_per_sec", "throughput/device/tokens_per_sec"},
      {"throughput/flops_per_sec", "throughput/device/flops_per_sec"}};
  static const std::string kMfu = "throughput/device/mfu";
  enum { kBatches, kSamples, kTokens, kFlops };
  out.reserve(9);
  auto both = [&](int what, double per_sec) {
    out.emplace_back(kNames[what][0], per_sec);
    out.emplace_back(kNames[what][1], per_sec / devices);
  };
  both(kBatches, static_cast<double>(window_size_) / secs);
  both(kSamples, (b.samples - a.samples) / secs);
  if (b.tokens > a.tokens) both(kTokens, (b.tokens - a.tokens) / secs);
  if (b.flops > a.flops) {
    const double flops_per_sec = (b.flops - a.flops) / secs;
    both(kFlops, flops_per_sec);
    if (s.peak_flops && *s.peak_flops > 0) out.emplace_back(kMfu, flops_per_sec / devices / *s.peak_flops);
  }
  return out;
}

}  // namespace trainhook::throughput
