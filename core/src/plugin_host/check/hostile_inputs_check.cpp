// hostile_inputs: inputs a real run can send that a plugin's author may not
// have thought of, each case a whole run of new instances (fake_trainer.hpp):
//   NaN and infinite losses (step values and log records), an empty log
//   record, a record of 10000 keys, keys and string values that are not ASCII,
//   a trainer of the plugin's oldest ABI minor (a cut th_host whose later
//   fields are NULL, event arguments without step values, no best checkpoint
//   nor trial name), and rank 1 of a world of 4 (integrations, which run on
//   rank 0 only, get rank 0 of 4).
// Every call must return TH_OK; a crash names the case's event (the command).
#include "callback_session.hpp"
#include "checks.hpp"
#include "fake_trainer.hpp"

#include <cmath>
#include <functional>
#include <limits>

namespace trainhook::plugin_check {
namespace {

struct Case {
  std::string name;
  int32_t only_kind = -1;
  std::function<void(FakeTrainer&, CheckHost&)> setup;
};

// The event argument size a trainer of ABI 1.<minor> sends.
uint32_t args_size_of_minor(uint32_t minor) {
  if (minor == 0) return static_cast<uint32_t>(TH_STRUCT_SIZE(th_event_args, prediction_kind));
  if (minor < 3) return static_cast<uint32_t>(TH_STRUCT_SIZE(th_event_args, step));
  if (minor < 7) return static_cast<uint32_t>(TH_STRUCT_SIZE(th_event_args, failure));
  return TH_EVENT_ARGS_STRUCT_SIZE;
}

}  // namespace

void check_hostile_inputs(CheckContext& ctx) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const uint32_t minor = ctx.info->abi_minor;
  std::vector<Case> cases = {
      {"NaN and infinite losses", -1,
       [=](FakeTrainer& t, CheckHost&) {
         t.loss_at = [=](int64_t step) { return step % 3 == 0 ? nan : step % 3 == 1 ? inf : -inf; };
         t.fill_log = [=](testkit::Values& r, int64_t step) {
           r.add("loss", step % 2 == 0 ? nan : inf).add("grad_norm", inf).add("learning_rate", 1e-3);
         };
       }},
      {"an empty log record", -1,
       [](FakeTrainer& t, CheckHost&) { t.fill_log = [](testkit::Values&, int64_t) {}; }},
      {"a log record of 10000 keys", -1,
       [](FakeTrainer& t, CheckHost&) {
         t.fill_log = [](testkit::Values& r, int64_t step) {
           for (int i = 0; i < 10000; ++i)
             r.add("metric_" + std::to_string(i), static_cast<double>(i + step));
           for (int i = 0; i < 100; ++i) r.add_string("note_" + std::to_string(i), std::string(200, 'x'));
         };
       }},
      {"keys and values that are not ASCII", -1,
       [](FakeTrainer& t, CheckHost&) {
         t.fill_log = [](testkit::Values& r, int64_t) {
           r.add("损失", 0.5).add("précision", 0.9).add("λ_reg", 1e-4).add("🚀_speed", 3.0).add("loss", 0.5);
           r.add_string("commentaire", "très bien ✓").add_string("модель", "сеть");
         };
       }},
      {"a trainer of ABI 1." + std::to_string(minor) + " (absent optional fields)", -1,
       [=](FakeTrainer& t, CheckHost& h) {
         h.play_minor(minor);
         t.args_struct_size = args_size_of_minor(minor);
         t.step_values = minor >= 1;
       }},
      {"rank 1 of a world of 4", TH_KIND_CALLBACK,
       [](FakeTrainer& t, CheckHost& h) {
         t.set_rank(1, 4);
         h.set_rank(1, 4);
       }},
      {"rank 0 of a world of 4", TH_KIND_INTEGRATION,
       [](FakeTrainer& t, CheckHost& h) {
         t.set_rank(0, 4);
         h.set_rank(0, 4);
       }},
  };
  std::string detail;
  bool failed = false;
  for (const auto& c : cases) {
    CheckHost host(ctx.output_dir, "plugin-check");
    ctx.progress.set_phase(c.name);
    CallbackSession session(*ctx.info, host, ctx.progress, ctx.configs, c.only_kind);
    try {
      session.create();
      if (session.size() == 0) continue;  // no callback of that kind
      FakeTrainer trainer(session, ctx.output_dir);
      c.setup(trainer, host);
      trainer.init_end();
      trainer.train(0);
      trainer.predict();
      session.destroy();
    } catch (const StopRun& stop) {
      report("hostile_inputs", stop.exception ? Verdict::skip : Verdict::fail, c.name + ": " + stop.why);
      return;
    }
    if (session.error_count() == 0) {
      detail += "\n  ok: " + c.name;
      continue;
    }
    failed = true;
    detail += "\n  FAIL: " + c.name + ": " + std::to_string(session.error_count()) +
              " call(s) did not return TH_OK";
    for (const auto& e : session.errors()) detail += "\n    " + e;
  }
  report("hostile_inputs", failed ? Verdict::fail : Verdict::pass,
         detail.empty() ? "no case ran" : detail.substr(1));
}

}  // namespace trainhook::plugin_check
