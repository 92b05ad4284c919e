// event_time: the time each callback takes per event, on the training thread,
// over a run of 3 epochs x 20 steps that logs every step. A per-step event
// (step_begin .. step_end, substep_end, log, prediction_step) whose mean call
// takes longer than the step budget slows every step of every run: FAIL; the
// others (train_begin/end, epochs, evaluate, save, ...) have the event budget.
// A single call over budget (a first-call set-up) is a WARN.
#include "callback_session.hpp"
#include "checks.hpp"
#include "fake_trainer.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace trainhook::plugin_check {
namespace {

bool per_step(const std::string& key) {
  for (const char* e : {".on_step_begin", ".on_substep_end", ".on_pre_optimizer_step", ".on_optimizer_step",
                        ".on_step_end", ".on_log", ".on_prediction_step"}) {
    const std::string s(e);
    if (key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

std::string ms(double v) {
  char buf[32];
  if (v < 0.1)
    std::snprintf(buf, sizeof buf, "%.2f us", v * 1000);
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.2f ms" : "%.0f ms", v);
  return buf;
}

}  // namespace

void check_event_time(CheckContext& ctx) {
  CheckHost host(ctx.output_dir, "plugin-check");
  CallbackSession session(*ctx.info, host, ctx.progress, ctx.configs);
  RunShape shape;
  shape.epochs = 3;
  shape.steps_per_epoch = 20;
  shape.logging_steps = 1;
  shape.save_steps = 20;
  try {
    session.create();
    FakeTrainer trainer(session, ctx.output_dir, shape);
    trainer.init_end();
    trainer.train(0);
    session.destroy();
  } catch (const StopRun& stop) {
    report("event_time", Verdict::skip, stop.why);
    return;
  }
  struct Row {
    std::string key;
    double mean_ms, max_ms, budget_ms;
    uint64_t calls;
    int64_t max_step;
  };
  std::vector<Row> rows;
  for (const auto& [key, t] : session.times())
    rows.push_back(Row{key, t.total_ns / 1e6 / static_cast<double>(t.calls), t.max_ns / 1e6,
                       per_step(key) ? ctx.step_budget_ms : ctx.event_budget_ms, t.calls, t.max_step});
  std::sort(rows.begin(), rows.end(),
            [](const Row& a, const Row& b) { return a.mean_ms / a.budget_ms > b.mean_ms / b.budget_ms; });
  bool slow = false, spike = false;
  std::string detail;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const bool over = r.mean_ms > r.budget_ms;
    const bool once = !over && r.max_ms > r.budget_ms;
    slow = slow || over;
    spike = spike || once;
    if (i >= 6 && !over && !once) continue;  // the slowest few, and every one over
    detail += "\n  " +
              std::string(over   ? "OVER "
                          : once ? "once "
                                 : "     ") +
              r.key + ": " + std::to_string(r.calls) + " calls, mean " + ms(r.mean_ms) + ", max " +
              ms(r.max_ms) + " (step " + std::to_string(r.max_step) + "); budget " + ms(r.budget_ms) +
              (per_step(r.key) ? " per step" : "");
  }
  const std::string head = slow    ? "events slower than their budget (--step_budget_ms, --event_budget_ms):"
                           : spike ? "within budget on average; a single call was over:"
                                   : "every event within its budget:";
  report("event_time",
         slow    ? Verdict::fail
         : spike ? Verdict::warn
                 : Verdict::pass,
         rows.empty() ? "no event was called" : head + detail);
}

}  // namespace trainhook::plugin_check
