// The early_stopping plugin through the C ABI: configuration, the train-begin
// checks, HF's counting rule (patience, threshold, greater_is_better, eval_
// prefix, missing metric) and its saved state.
#include <plugin_driver.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

using testkit::CallError;
using testkit::FakeHost;
using testkit::Instance;
using testkit::Library;
using testkit::Run;
using testkit::Values;

namespace {

Library& library() {
  static Library lib(testkit::plugin_path("early_stopping"));
  return lib;
}
const th_callback_info& info() { return library().callback("early_stopping"); }

std::string args(const std::string& metric, std::optional<bool> greater_is_better,
                 const std::string& eval_strategy = "steps", bool load_best = true) {
  nlohmann::json j = {{"eval_strategy", eval_strategy}, {"load_best_model_at_end", load_best}};
  j["metric_for_best_model"] = metric.empty() ? nlohmann::json(nullptr) : nlohmann::json(metric);
  j["greater_is_better"] = greater_is_better ? nlohmann::json(*greater_is_better) : nlohmann::json(nullptr);
  return j.dump();
}

// Plays a run the way the trainer does: evaluation at each step, on_evaluate
// with the metrics, then the trainer's best-metric update (strictly better,
// no threshold). Returns the 1-based evaluation at which the callback asked
// to stop, or 0 if it never did.
struct Player {
  FakeHost host;
  std::optional<Instance> cb;
  Run run;
  bool greater = false;
  std::string key = "eval_loss";

  Player(const std::string& config, const std::string& args_json, bool greater_is_better,
         std::string metric_key)
      : greater(greater_is_better), key(std::move(metric_key)) {
    host.args_json = args_json;
    cb.emplace(info(), host, config);
    run.control.should_training_stop = 0;
    cb->fire(TH_EVENT_TRAIN_BEGIN, run);
  }
  bool evaluate(double value) {
    run.state.global_step += 10;
    Values metrics{{key, value}, {"eval_runtime", 0.5}};
    run.control.should_training_stop = 0;
    cb->fire(TH_EVENT_EVALUATE, run, metrics.view());
    const bool better = !run.state.has_best_metric ||
                        (greater ? value > run.state.best_metric : value < run.state.best_metric);
    if (better) {
      run.state.has_best_metric = 1;
      run.state.best_metric = value;
    }
    return run.control.should_training_stop != 0;
  }
  int play(const std::vector<double>& values) {
    for (size_t i = 0; i < values.size(); ++i)
      if (evaluate(values[i])) return static_cast<int>(i + 1);
    return 0;
  }
};

int stops_at(const std::vector<double>& values, const std::string& config, bool greater,
             const std::string& metric = "eval_loss") {
  Player p(config, args(metric, greater), greater, metric.rfind("eval_", 0) == 0 ? metric : "eval_" + metric);
  return p.play(values);
}

}  // namespace

TEST_CASE("the library exports one callback, early_stopping, of kind callback, that saves state") {
  const th_plugin_info& lib = library().info();
  CHECK(std::string(lib.name) == "early_stopping");
  REQUIRE(lib.callback_count == 1);
  CHECK(info().kind == TH_KIND_CALLBACK);
  CHECK((info().event_mask & TH_EVENT_BIT(TH_EVENT_EVALUATE)) != 0);
  CHECK((info().event_mask & TH_EVENT_BIT(TH_EVENT_TRAIN_BEGIN)) != 0);
  CHECK((info().event_mask & TH_EVENT_BIT(TH_EVENT_STEP_END)) == 0);  // nothing on the hot path
  CHECK(bool(info().vtable->save_state));
  CHECK(bool(info().vtable->load_state));
}

TEST_CASE("configuration: HF names, short aliases, numbers as strings") {
  FakeHost host;
  CHECK_NOTHROW(Instance(info(), host, "{}"));
  CHECK_NOTHROW(
      Instance(info(), host, R"({"early_stopping_patience": 3, "early_stopping_threshold": 0.01})"));
  CHECK_NOTHROW(Instance(info(), host, R"({"patience": "3", "threshold": "1e-4"})"));
  // The configured values are what is saved.
  Instance cb(info(), host, R"({"patience": "4", "threshold": 0.25})");
  const auto saved = nlohmann::json::parse(cb.save_state());
  CHECK(saved["args"]["early_stopping_patience"] == 4);
  CHECK(saved["args"]["early_stopping_threshold"] == 0.25);
  CHECK(saved["attributes"]["early_stopping_patience_counter"] == 0);
}

TEST_CASE("configuration errors name the key and what was expected") {
  FakeHost host;
  auto message = [&](const std::string& cfg) -> std::string {
    try {
      Instance cb(info(), host, cfg);
    } catch (const CallError& e) {
      CHECK(e.status == TH_INVALID_ARGUMENT);
      return e.what();
    }
    FAIL("no error for " << cfg);
    return {};
  };
  const std::string unknown = message(R"({"patiense": 3})");
  CHECK(unknown.find("patiense") != std::string::npos);
  CHECK(unknown.find("early_stopping_patience") != std::string::npos);
  CHECK(unknown.find("early_stopping_threshold") != std::string::npos);
  CHECK(message(R"({"patience": 0})").find("integer >= 1") != std::string::npos);
  CHECK(message(R"({"patience": 1.5})").find("patience") != std::string::npos);
  CHECK(message(R"({"early_stopping_patience": "three"})").find("early_stopping_patience") !=
        std::string::npos);
  CHECK(message(R"({"threshold": -0.1})").find("threshold") != std::string::npos);
  CHECK(message(R"({"patience": 2, "early_stopping_patience": 3})").find("twice") != std::string::npos);
  CHECK(message(R"([1, 2])").find("JSON object") != std::string::npos);
  CHECK(message("{not json").find("not a valid JSON object") != std::string::npos);
  CHECK(unknown.find("unknown key 'patiense' (did you mean 'patience'?)") != std::string::npos);
  CHECK(message(R"({"patience": "3x"})").find(R"(expected an integer >= 1, got "3x")") != std::string::npos);
}

TEST_CASE(
    "train begin: errors without metric_for_best_model or with eval_strategy no, warns without load_best") {
  auto begin = [](const std::string& args_json, FakeHost& host) {
    host.args_json = args_json;
    Instance cb(info(), host);
    Run run;
    cb.fire(TH_EVENT_TRAIN_BEGIN, run);
  };
  {
    FakeHost host;
    try {
      begin(args("", false), host);
      FAIL("no error without metric_for_best_model");
    } catch (const CallError& e) {
      CHECK(std::string(e.what()).find("metric_for_best_model") != std::string::npos);
    }
  }
  {
    FakeHost host;
    try {
      begin(args("eval_loss", false, "no"), host);
      FAIL("no error with eval_strategy no");
    } catch (const CallError& e) {
      CHECK(std::string(e.what()).find("eval_strategy") != std::string::npos);
    }
  }
  {
    FakeHost host;
    CHECK_NOTHROW(begin(args("eval_loss", false, "epoch", /*load_best=*/false), host));
    CHECK(host.count_logs(TH_LOG_WARN, "load_best_model_at_end") == 1);
  }
  {
    FakeHost host;
    CHECK_NOTHROW(begin(args("eval_loss", false, "steps", /*load_best=*/true), host));
    CHECK(host.count_logs(TH_LOG_WARN, "load_best_model_at_end") == 0);
  }
}

TEST_CASE("a plateau stops after exactly `patience` evaluations without improvement") {
  const std::vector<double> plateau = {1.0, 0.8, 0.8, 0.8, 0.8, 0.8};
  CHECK(stops_at(plateau, "{}", false) == 3);  // default patience 1
  CHECK(stops_at(plateau, R"({"patience": 2})", false) == 4);
  CHECK(stops_at(plateau, R"({"patience": 3})", false) == 5);
  CHECK(stops_at(plateau, R"({"patience": 5})", false) == 0);
  // An improvement resets the counter.
  CHECK(stops_at({1.0, 1.0, 0.5, 0.5, 0.5}, R"({"patience": 2})", false) == 5);
  // The first evaluation never counts (no best yet), even when it is bad.
  CHECK(stops_at({100.0}, "{}", false) == 0);
}

TEST_CASE("improvement is strict and must exceed the threshold (absolute)") {
  // Equal is not better.
  CHECK(stops_at({0.5, 0.5}, "{}", false) == 2);
  // 0.95 beats 1.0 by 0.05, not by more than 0.1: counts as no improvement.
  CHECK(stops_at({1.0, 0.95, 0.94}, R"({"patience": 2, "threshold": 0.1})", false) == 3);
  // Beating by more than the threshold resets.
  CHECK(stops_at({1.0, 0.85, 0.70, 0.69}, R"({"patience": 2, "threshold": 0.1})", false) == 0);
  // Exactly the threshold is not more than it.
  CHECK(stops_at({1.0, 0.75}, R"({"threshold": 0.25})", false) == 2);
  CHECK(stops_at({1.0, 0.7}, R"({"threshold": 0.25})", false) == 0);
}

TEST_CASE("greater_is_better both ways") {
  // Accuracy rising: never stops when greater is better; stops at once when lower is better.
  const std::vector<double> rising = {0.5, 0.6, 0.7, 0.8};
  CHECK(stops_at(rising, "{}", true, "eval_accuracy") == 0);
  CHECK(stops_at(rising, "{}", false, "eval_accuracy") == 2);
  const std::vector<double> falling = {0.8, 0.7, 0.6, 0.5};
  CHECK(stops_at(falling, "{}", true, "eval_accuracy") == 2);
  CHECK(stops_at(falling, "{}", false, "eval_accuracy") == 0);
  // Threshold applies in the greater direction too.
  CHECK(stops_at({0.5, 0.55, 0.56}, R"({"patience": 2, "threshold": 0.1})", true, "eval_accuracy") == 3);
}

TEST_CASE("greater_is_better unset: HF's default from the metric name") {
  FakeHost host;
  // "accuracy" does not end with loss: greater is better; the eval_ prefix is added.
  host.args_json = args("accuracy", std::nullopt);
  Instance acc(info(), host);
  Run run;
  acc.fire(TH_EVENT_TRAIN_BEGIN, run);
  run.state.has_best_metric = 1;
  run.state.best_metric = 0.5;
  Values better{{"eval_accuracy", 0.9}};
  acc.fire(TH_EVENT_EVALUATE, run, better.view());
  CHECK(run.control.should_training_stop == 0);
  Values worse{{"eval_accuracy", 0.1}};
  acc.fire(TH_EVENT_EVALUATE, run, worse.view());
  CHECK(run.control.should_training_stop == 1);

  // "loss": lower is better.
  host.args_json = args("loss", std::nullopt);
  Instance loss(info(), host);
  Run run2;
  loss.fire(TH_EVENT_TRAIN_BEGIN, run2);
  run2.state.has_best_metric = 1;
  run2.state.best_metric = 0.5;
  Values lower{{"eval_loss", 0.1}};
  loss.fire(TH_EVENT_EVALUATE, run2, lower.view());
  CHECK(run2.control.should_training_stop == 0);
  Values higher{{"eval_loss", 0.9}};
  loss.fire(TH_EVENT_EVALUATE, run2, higher.view());
  CHECK(run2.control.should_training_stop == 1);
}

TEST_CASE("a missing metric warns and does not count") {
  Player p("{}", args("eval_loss", false), false, "eval_loss");
  CHECK_FALSE(p.evaluate(1.0));
  // Metrics without eval_loss: a warning naming it, no count, no stop.
  Values other{{"eval_accuracy", 0.3}};
  p.run.control.should_training_stop = 0;
  p.cb->fire(TH_EVENT_EVALUATE, p.run, other.view());
  CHECK(p.run.control.should_training_stop == 0);
  CHECK(p.host.count_logs(TH_LOG_WARN, "eval_loss") == 1);
  p.cb->fire(TH_EVENT_EVALUATE, p.run, nullptr);
  CHECK(p.run.control.should_training_stop == 0);
  CHECK(nlohmann::json::parse(p.cb->save_state())["attributes"]["early_stopping_patience_counter"] == 0);
  // The next real non-improvement stops (patience 1): the misses did not count either way.
  CHECK(p.evaluate(1.0));
  CHECK(p.host.count_logs(TH_LOG_INFO, "stopping training") == 1);
  // An evaluation after training (the CLI's final evaluate) still counts, as in HF, but announces nothing.
  p.cb->fire(TH_EVENT_TRAIN_END, p.run);
  CHECK(p.evaluate(1.0));
  CHECK(p.host.count_logs(TH_LOG_INFO, "stopping training") == 1);
}

TEST_CASE("NaN never improves") { CHECK(stops_at({1.0, std::nan("")}, "{}", false) == 2); }

TEST_CASE("the counter is saved and restored: a resumed run stops where an uninterrupted one would") {
  const std::vector<double> values = {1.0, 0.5, 0.6, 0.7, 0.55, 0.9, 0.9};
  const std::string config = R"({"patience": 3})";
  const int uninterrupted = stops_at(values, config, false);
  REQUIRE(uninterrupted == 5);

  for (int cut = 1; cut < uninterrupted; ++cut) {
    CAPTURE(cut);
    // First run: `cut` evaluations, then a checkpoint.
    Player first(config, args("eval_loss", false), false, "eval_loss");
    for (int i = 0; i < cut; ++i) REQUIRE_FALSE(first.evaluate(values[static_cast<size_t>(i)]));
    const std::string saved = first.cb->save_state();
    const auto j = nlohmann::json::parse(saved);
    CHECK(j["args"]["early_stopping_patience"] == 3);
    CHECK(j["attributes"]["early_stopping_patience_counter"].is_number_integer());

    // Resumed run: a new instance, the state loaded before train begin, the best from trainer_state.
    FakeHost host;
    host.args_json = args("eval_loss", false);
    Instance resumed(info(), host, config);
    resumed.load_state(saved);
    Run run = first.run;
    resumed.fire(TH_EVENT_TRAIN_BEGIN, run);
    int stopped = 0;
    for (size_t i = static_cast<size_t>(cut); i < values.size() && stopped == 0; ++i) {
      run.control.should_training_stop = 0;
      Values m{{"eval_loss", values[i]}};
      resumed.fire(TH_EVENT_EVALUATE, run, m.view());
      if (run.control.should_training_stop) stopped = static_cast<int>(i + 1);
      if (!run.state.has_best_metric || values[i] < run.state.best_metric) {
        run.state.has_best_metric = 1;
        run.state.best_metric = values[i];
      }
    }
    CHECK(stopped == uninterrupted);
  }
}

TEST_CASE("load_state rejects state it cannot use, naming what is missing") {
  FakeHost host;
  Instance cb(info(), host);
  CHECK_THROWS_WITH_AS(cb.load_state("{"), doctest::Contains("not valid JSON"), CallError);
  CHECK_THROWS_WITH_AS(cb.load_state(R"({"args": {}})"), doctest::Contains("early_stopping_patience_counter"),
                       CallError);
  CHECK_THROWS_WITH_AS(cb.load_state(R"({"attributes": {"early_stopping_patience_counter": -1}})"),
                       doctest::Contains("non-negative"), CallError);
  // A checkpoint saved with other options: this run's options win, with a warning.
  CHECK_NOTHROW(cb.load_state(
      R"({"args": {"early_stopping_patience": 7, "early_stopping_threshold": 0.0}, "attributes": {"early_stopping_patience_counter": 2}})"));
  CHECK(host.count_logs(TH_LOG_WARN, "checkpoint was saved with early stopping") == 1);
  CHECK(nlohmann::json::parse(cb.save_state())["attributes"]["early_stopping_patience_counter"] == 2);
}
