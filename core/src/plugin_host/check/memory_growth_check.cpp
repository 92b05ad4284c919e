// memory_growth: the resident memory of the process over a long run (a log
// record every step), sampled every 1000 steps after a warm-up, so what a
// callback keeps per step shows as a steady rise. Bounded in time: a plugin
// too slow for enough steps is not judged here (event_time says why).
#include "callback_session.hpp"
#include "checks.hpp"
#include "fake_trainer.hpp"

#include <chrono>
#include <cstdio>
#include <vector>

namespace trainhook::plugin_check {
namespace {

constexpr int kSteps = 20000;
constexpr int kWarmup = 4000;
constexpr int kEvery = 1000;
constexpr auto kTimeCap = std::chrono::seconds(10);
constexpr int64_t kFailBytes = int64_t{8} << 20;
constexpr int64_t kWarnBytes = int64_t{2} << 20;

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

struct TimeUp {};

}  // namespace

void check_memory_growth(CheckContext& ctx) {
#if defined(__SANITIZE_ADDRESS__)
  // Its allocator keeps freed memory in quarantine: resident memory grows with
  // any allocation, the plugin's or ours.
  report("memory_growth", Verdict::skip, "not measured in an AddressSanitizer build of the helper");
  return;
#endif
  CheckHost host(ctx.output_dir, "plugin-check");
  CallbackSession session(*ctx.info, host, ctx.progress, ctx.configs);
  RunShape shape;
  shape.epochs = 1;
  shape.steps_per_epoch = kSteps;
  shape.logging_steps = 1;
  shape.save_steps = kSteps + 1;  // no checkpoint: their folders are not the plugin's memory
  shape.eval_batches = 0;
  std::vector<int64_t> samples;
  int64_t last_step = 0;
  const auto deadline = std::chrono::steady_clock::now() + kTimeCap;
  try {
    session.create();
    FakeTrainer trainer(session, ctx.output_dir, shape);
    trainer.after_step = [&](int64_t step) {
      last_step = step;
      if (step >= kWarmup && step % kEvery == 0) samples.push_back(resident_bytes());
      if (std::chrono::steady_clock::now() > deadline) throw TimeUp{};
    };
    trainer.init_end();
    try {
      trainer.train(0);
    } catch (const TimeUp&) {
    }
    session.destroy();
  } catch (const StopRun& stop) {
    report("memory_growth", Verdict::skip, stop.why);
    return;
  }
  if (samples.size() < 4) {
    report("memory_growth", Verdict::skip,
           "only " + std::to_string(last_step) + " steps in " + std::to_string(kTimeCap.count()) +
               " s: too slow to measure (see event_time)");
    return;
  }
  const int64_t growth = samples.back() - samples.front();
  size_t rises = 0;
  for (size_t i = 1; i < samples.size(); ++i) rises += samples[i] > samples[i - 1] ? 1 : 0;
  const int64_t steps = static_cast<int64_t>(samples.size() - 1) * kEvery;
  const bool steady = rises * 4 >= (samples.size() - 1) * 3;  // rose in 3 of 4 intervals
  const std::string figures =
      mib(growth) + " over " + std::to_string(steps) + " steps (" + std::to_string(growth / steps) +
      " bytes per step; resident " + mib(samples.front()) + " -> " + mib(samples.back()) + ", rose in " +
      std::to_string(rises) + " of " + std::to_string(samples.size() - 1) + " intervals)";
  if (growth >= kFailBytes && steady)
    report("memory_growth", Verdict::fail, "memory grows with every step: " + figures);
  else if (growth >= kWarnBytes)
    report("memory_growth", Verdict::warn, "memory grew: " + figures);
  else
    report("memory_growth", Verdict::pass, "steady: " + figures);
}

}  // namespace trainhook::plugin_check
