// events and resume: the library's callbacks through a fake run in the
// Hugging Face order (fake_trainer.hpp): init_end, a train() of 2 epochs with
// logs, evaluations and saves, predict, then a second train() on the same
// instances (a script may call train() twice); then a new instance is given
// the state saved at the first checkpoint (load_state) and resumes from it.
// Every call must return TH_OK. observe_only: the events each callback
// declared it only observes (th_host.set_observe_only) or runs side by side
// (set_side_by_side) are watched through the first run; one that steers the
// run there fails (isolated, what it set there is not taken). Every call of
// both runs is watched (ctx.watch, call_watch.hpp); the watch stops before
// check_process_footprint counts threads and reports what it saw.
#include "callback_session.hpp"
#include "checks.hpp"
#include "fake_trainer.hpp"

#include <nlohmann/json.hpp>

namespace trainhook::plugin_check {
namespace {

std::string listed(const std::vector<std::string>& errors, uint64_t count) {
  std::string out;
  for (const auto& e : errors) out += "\n  " + e;
  if (count > errors.size()) out += "\n  ... " + std::to_string(count - errors.size()) + " more";
  return out;
}

uint64_t calls_of(const CallbackSession& s) {
  uint64_t n = 0;
  for (const auto& [name, t] : s.times()) n += t.calls;
  return n;
}

void report_observe_only(const std::vector<CallbackSession::ObserveOnly>& declared,
                         const CallbackSession& s) {
  constexpr uint64_t kAlwaysWaited = TH_EVENT_BIT(TH_EVENT_TRAIN_END) | TH_EVENT_BIT(TH_EVENT_EXCEPTION);
  std::string detail;
  std::vector<std::string> warns;
  for (const auto& d : declared) {
    const uint64_t observed = d.events & d.event_mask & TH_EVENT_MASK_ALL & ~kAlwaysWaited;
    if (!d.declared)
      detail += "\n  " + d.callback +
                ": declares no event observe-only (isolated, every event waits for its answer; a logger "
                "declares the events it only reads with th_host.set_observe_only, ABI 1.6)";
    else
      detail +=
          "\n  " + d.callback +
          (observed != 0 ? ": observes " + events_of(observed) + " (isolated, delivered without a round trip)"
                         : std::string(": declared no event it may observe (every event waits)"));
    if (const uint64_t side = d.side_by_side & d.event_mask & ~observed & TH_EVENT_MASK_ALL; side != 0)
      detail += "; side by side at " + events_of(side) + " (isolated, waited for at the event's end)";
    if ((d.side_by_side & ~d.event_mask) != 0)
      warns.push_back(d.callback + ": declares side by side events its event mask does not ask for: " +
                      events_of(d.side_by_side & ~d.event_mask));
    if ((d.events & ~d.event_mask) != 0)
      warns.push_back(d.callback + ": declares events its event mask does not ask for: " +
                      events_of(d.events & ~d.event_mask));
    if ((d.events & d.event_mask & kAlwaysWaited) != 0)
      warns.push_back(d.callback + ": declares " + events_of(d.events & d.event_mask & kAlwaysWaited) +
                      " observe-only, which the trainer always waits for");
  }
  if (s.steered_count() > 0) {
    std::string listed_steers;
    for (const auto& e : s.steered_observed()) listed_steers += "\n  " + e;
    if (s.steered_count() > s.steered_observed().size())
      listed_steers += "\n  ... " + std::to_string(s.steered_count() - s.steered_observed().size()) + " more";
    report("observe_only", Verdict::fail,
           std::to_string(s.steered_count()) +
               " call(s) steered the run in an event declared observe-only or side by side (isolated, the "
               "trainer does not take a flag set there and reports it as the callback's failure; a host "
               "function that steers is refused): declare only the events it never steers in" +
               listed_steers);
    return;
  }
  for (const auto& w : warns) detail += "\n  WARN: " + w;
  report("observe_only", warns.empty() ? Verdict::pass : Verdict::warn,
         (declared.empty() ? std::string("no callback created") : "what each callback declared:") + detail);
}

}  // namespace

void check_events(CheckContext& ctx) {
  struct Watching {
    CallWatch& watch;
    ~Watching() { watch.stop(); }
  } watching{ctx.watch};
  ctx.watch.start();
  CheckHost host(ctx.output_dir, "plugin-check");
  const RunShape shape;
  std::map<int64_t, std::map<std::string, std::string>> saved;
  uint64_t calls = 0;
  size_t created = 0;
  std::vector<CallbackSession::ObserveOnly> declared;
  {
    CallbackSession session(*ctx.info, host, ctx.progress, ctx.configs);
    session.set_watch(&ctx.watch);
    try {
      session.create();
      created = session.size();
      declared = session.observe_only();
      FakeTrainer trainer(session, ctx.output_dir, shape);
      trainer.init_end();
      trainer.train(0, &saved);
      trainer.predict();
      trainer.train(0);  // the second train() of the same trainer
      session.destroy();
    } catch (const StopRun& stop) {
      report("events", stop.exception ? Verdict::skip : Verdict::fail, stop.why);
      report("observe_only", Verdict::skip, "the run stopped");
      report("resume", Verdict::skip, "the run before it stopped");
      return;
    }
    report_observe_only(declared, session);
    calls = calls_of(session);
    if (session.error_count() > 0) {
      report("events", Verdict::fail,
             std::to_string(session.error_count()) +
                 " call(s) did not return TH_OK:" + listed(session.errors(), session.error_count()));
    } else {
      report("events", Verdict::pass,
             std::to_string(calls) + " calls to " + std::to_string(created) +
                 " callback(s): init_end, 2 train() cycles of " + std::to_string(shape.epochs) +
                 " epochs x " + std::to_string(shape.steps_per_epoch) + " steps (gradient accumulation " +
                 std::to_string(shape.grad_accum) + ", logs, evaluations, saves), predict");
    }
  }

  // Resume: the state the first checkpoint holds, into new instances.
  const int64_t checkpoint = shape.save_steps;
  const auto states = saved.count(checkpoint) != 0 ? saved[checkpoint] : std::map<std::string, std::string>{};
  std::string bad_json;
  for (const auto& [name, json] : states)
    if (!nlohmann::json::accept(json)) bad_json += "\n  " + name + ": " + json.substr(0, 200);
  if (!bad_json.empty()) {
    report("resume", Verdict::fail, "save_state wrote text that is not JSON:" + bad_json);
    return;
  }
  CallbackSession session(*ctx.info, host, ctx.progress, ctx.configs);
  session.set_watch(&ctx.watch);
  try {
    session.create();
    session.load_states(states);
    FakeTrainer trainer(session, ctx.output_dir, shape);
    trainer.init_end();
    trainer.train(checkpoint);
    session.destroy();
  } catch (const StopRun& stop) {
    report("resume", stop.exception ? Verdict::skip : Verdict::fail, stop.why);
    return;
  }
  if (session.error_count() > 0) {
    report("resume", Verdict::fail,
           "resuming from checkpoint-" + std::to_string(checkpoint) + ": " +
               std::to_string(session.error_count()) +
               " call(s) did not return TH_OK:" + listed(session.errors(), session.error_count()));
    return;
  }
  std::string what;
  for (const auto& [name, json] : states)
    what += (what.empty() ? "" : ", ") + name + " (" + std::to_string(json.size()) + " bytes)";
  report("resume", Verdict::pass,
         states.empty()
             ? "nothing saved (no save_state, or an empty state): new instances resumed from checkpoint-" +
                   std::to_string(checkpoint)
             : "the state saved at checkpoint-" + std::to_string(checkpoint) + " of " + what +
                   " loaded into new instances, which resumed to the end");
}

}  // namespace trainhook::plugin_check
