// The progress library through the C ABI (testkit/plugin_driver.hpp): its two callbacks,
// their options, what they print on stdout/stderr (captured with dup2), and
// that only the world-zero process prints.
#include <fd_capture.hpp>
#include <plugin_driver.hpp>

#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

using testkit::CallError;
using testkit::FakeHost;
using testkit::Instance;
using testkit::Library;
using testkit::Run;
using testkit::Values;

namespace {

Library& library() {
  static Library lib(testkit::plugin_path("progress"));
  return lib;
}

struct Output {
  std::string out, err;
};

// A short training run with logs and two evaluations, as the trainer fires it.
Output train(const std::string& callback, bool world_zero, const std::string& config = "{}") {
  fd_capture::Pipe out(STDOUT_FILENO), err(STDERR_FILENO);
  {
    FakeHost host;
    Instance cb(library().callback(callback), host, config);
    Run run;
    run.state.is_world_process_zero = world_zero ? 1 : 0;
    run.state.is_local_process_zero = world_zero ? 1 : 0;
    run.state.max_steps = 20;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
    for (int step = 1; step <= 20; ++step) {
      cb.fire(TH_EVENT_STEP_BEGIN, run);
      run.state.global_step = step;
      run.state.epoch = step / 20.0;
      cb.fire(TH_EVENT_STEP_END, run);
      if (step % 10 == 0) {
        Values logs{{"loss", 0.5}, {"grad_norm", 1.25}, {"learning_rate", 5e-05}, {"epoch", step / 30.0}};
        cb.fire(TH_EVENT_LOG, run, logs.view());
        for (int b = 0; b < 4; ++b) cb.fire(TH_EVENT_PREDICTION_STEP, run, nullptr, b, 4, 0);
        Values metrics{{"eval_loss", 0.75}, {"epoch", step / 30.0}};
        cb.fire(TH_EVENT_LOG, run, metrics.view());
        cb.fire(TH_EVENT_EVALUATE, run, metrics.view());
      }
    }
    Values final_logs{{"train_runtime", 1.5}, {"total_flos", 1e12}, {"train_loss", 0.5}, {"epoch", 1.0}};
    cb.fire(TH_EVENT_LOG, run, final_logs.view());
    cb.fire(TH_EVENT_TRAIN_END, run);
  }
  Output o;
  o.out = out.finish();
  o.err = err.finish();
  return o;
}

}  // namespace

TEST_CASE("the library exports progress and printer, both of kind callback") {
  CHECK(std::string(library().info().name) == "progress");
  const th_callback_info& progress = library().callback("progress");
  const th_callback_info& printer = library().callback("printer");
  CHECK(progress.kind == TH_KIND_CALLBACK);
  CHECK(printer.kind == TH_KIND_CALLBACK);
  for (int ev : {TH_EVENT_TRAIN_BEGIN, TH_EVENT_STEP_END, TH_EVENT_PREDICTION_STEP, TH_EVENT_EVALUATE,
                 TH_EVENT_PREDICT, TH_EVENT_LOG, TH_EVENT_TRAIN_END})
    CHECK((progress.event_mask & TH_EVENT_BIT(ev)) != 0);
  CHECK((progress.event_mask & TH_EVENT_BIT(TH_EVENT_STEP_BEGIN)) == 0);
  CHECK((printer.event_mask & TH_EVENT_BIT(TH_EVENT_LOG)) != 0);
  CHECK((printer.event_mask & TH_EVENT_BIT(TH_EVENT_STEP_END)) == 0);
}

TEST_CASE("options: known keys accepted, unknown keys name the key and the valid ones") {
  FakeHost host;
  CHECK_NOTHROW(Instance(library().callback("progress"), host,
                         R"({"min_interval": 0.5, "plain_interval": "60", "plain_percent": 5})"));
  try {
    Instance cb(library().callback("progress"), host, R"({"refresh": 1})");
    FAIL("no error");
  } catch (const CallError& e) {
    CHECK(e.status == TH_INVALID_ARGUMENT);
    CHECK(std::string(e.what()).find("plugin_config progress: unknown key 'refresh'") != std::string::npos);
    CHECK(std::string(e.what()).find("min_interval, plain_interval, plain_percent") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(Instance(library().callback("progress"), host, R"({"min_interval": 0})"),
                       doctest::Contains("progress.min_interval: expected a number > 0"), CallError);
  CHECK_THROWS_WITH_AS(Instance(library().callback("printer"), host, R"({"x": 1})"),
                       doctest::Contains("plugin_config printer: unknown key 'x'; it takes no keys"),
                       CallError);
}

TEST_CASE("progress on a pipe: HF log lines on stdout, plain progress lines on stderr") {
  const Output o = train("progress", true);
  CHECK(fd_capture::plain_text(o.out));
  CHECK(fd_capture::plain_text(o.err));
  CHECK(o.out ==
        "{'loss': 0.5, 'grad_norm': 1.25, 'learning_rate': 5e-05, 'epoch': 0.33}\n"
        "{'eval_loss': 0.75, 'epoch': 0.33}\n"
        "{'loss': 0.5, 'grad_norm': 1.25, 'learning_rate': 5e-05, 'epoch': 0.67}\n"
        "{'eval_loss': 0.75, 'epoch': 0.67}\n"
        "{'train_runtime': 1.5, 'train_loss': 0.5, 'epoch': 1.0}\n");
  // The last progress line is the complete bar with the latest loss and learning rate.
  const size_t last = o.err.rfind("100% 20/20 [");
  REQUIRE(last != std::string::npos);
  CHECK(o.err.find("loss=0.5, lr=5e-05]", last) != std::string::npos);
  // Earlier lines depend on when the display thread woke; each is a plain progress line.
  CHECK(o.err.find("/20 [") != std::string::npos);
  CHECK(o.err.find('%') < o.err.find("/20 ["));
}

TEST_CASE("printer: every log line as HF's PrinterCallback prints it, no bars") {
  const Output o = train("printer", true);
  CHECK(o.err.empty());
  CHECK(o.out ==
        "{'loss': 0.5, 'grad_norm': 1.25, 'learning_rate': 5e-05, 'epoch': 0.3333333333333333}\n"
        "{'eval_loss': 0.75, 'epoch': 0.3333333333333333}\n"
        "{'loss': 0.5, 'grad_norm': 1.25, 'learning_rate': 5e-05, 'epoch': 0.6666666666666666}\n"
        "{'eval_loss': 0.75, 'epoch': 0.6666666666666666}\n"
        "{'train_runtime': 1.5, 'train_loss': 0.5, 'epoch': 1.0}\n");
}

TEST_CASE("only the world-zero process prints") {
  for (const char* name : {"progress", "printer"}) {
    CAPTURE(name);
    const Output o = train(name, false);
    CHECK(o.out.empty());
    CHECK(o.err.empty());
  }
}
