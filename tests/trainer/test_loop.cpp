// The training loop: HF event order, strategy schedules, accumulation,
// clipping, determinism, evaluate/predict, log history and memory metrics.
#include "trainer_test_support.hpp"

#include <trainhook/trainer/eval_prediction.hpp>
#include <trainhook/optim/lr_schedule.hpp>

#include <doctest/doctest.h>
#include <cmath>

#include <sstream>

using namespace trainhook;
using namespace trainhook::test;

namespace {

std::string join(const std::vector<Recorded>& events, const std::vector<std::string>& only = {}) {
  std::ostringstream out;
  for (const auto& e : events) {
    if (!only.empty() && std::find(only.begin(), only.end(), e.event) == only.end()) continue;
    out << e.event << "@" << e.step << " ";
  }
  return out.str();
}

std::vector<NamedCallback> recorder(std::vector<Recorded>* events, int64_t stop_at = -1) {
  std::vector<NamedCallback> cbs;
  cbs.push_back(recording_callback(events, stop_at));
  return cbs;
}

}  // namespace

TEST_CASE("events follow HF's order under gradient accumulation") {
  TempDir dir("trainhook-loop-order");
  auto args = small_args(dir.path.string());
  args.per_device_train_batch_size = 2;
  args.gradient_accumulation_steps = 2;
  args.num_train_epochs = 1;
  args.logging_steps = 2;
  std::vector<Recorded> events;
  Trainer trainer(tiny_model(1), args, synthetic_data(10), nullptr, plugin_free(recorder(&events)));
  const auto out = trainer.train();
  CHECK(out.global_step == 3);  // 5 batches, windows of 2+2+1
  CHECK(join(events) ==
        "on_init_end@0 on_train_begin@0 on_epoch_begin@0 "
        "on_step_begin@0 on_substep_end@0 on_pre_optimizer_step@0 on_optimizer_step@0 on_step_end@1 "
        "on_step_begin@1 on_substep_end@1 on_pre_optimizer_step@1 on_optimizer_step@1 on_step_end@2 on_log@2 "
        "on_step_begin@2 on_pre_optimizer_step@2 on_optimizer_step@2 on_step_end@3 "
        "on_epoch_end@3 on_log@3 on_train_end@3 ");
  const auto& h = trainer.state().log_history;
  REQUIRE(h.size() == 2);
  CHECK(h[0]["step"] == 2);
  for (const char* key : {"loss", "grad_norm", "learning_rate", "epoch"}) CHECK(h[0].contains(key));
  CHECK(h[0]["epoch"].get<double>() == doctest::Approx(4.0 / 5.0));
  for (const char* key : {"train_runtime", "train_samples_per_second", "train_steps_per_second", "total_flos",
                          "train_loss", "epoch", "step"}) {
    CHECK(h[1].contains(key));
  }
  CHECK(trainer.state().epoch == doctest::Approx(1.0));
  CHECK(trainer.state().max_steps == 3);
}

TEST_CASE("logging, evaluation and saving follow each strategy") {
  const std::vector<std::string> actions = {"on_log", "on_evaluate", "on_save"};
  struct Case {
    const char* name;
    std::function<void(TrainingArguments&)> configure;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"steps",
       [](TrainingArguments& a) {
         a.logging_steps = 2;
         a.eval_strategy = trainhook::IntervalStrategy::steps;
         a.eval_steps = 3;
         a.save_strategy = trainhook::SaveStrategy::steps;
         a.save_steps = 4;
       },
       "on_log@2 on_log@3 on_evaluate@3 on_log@4 on_save@4 on_log@6 on_log@6 on_evaluate@6 on_save@6 "
       "on_log@6 "},
      {"epoch",
       [](TrainingArguments& a) {
         a.logging_strategy = trainhook::IntervalStrategy::epoch;
         a.eval_strategy = trainhook::IntervalStrategy::epoch;
         a.save_strategy = trainhook::SaveStrategy::epoch;
       },
       "on_log@2 on_log@2 on_evaluate@2 on_save@2 on_log@4 on_log@4 on_evaluate@4 on_save@4 on_log@6 "
       "on_log@6 "
       "on_evaluate@6 on_save@6 on_log@6 "},
      {"first step and eval_delay",
       [](TrainingArguments& a) {
         a.logging_first_step = true;
         a.logging_strategy = trainhook::IntervalStrategy::no;
         a.eval_strategy = trainhook::IntervalStrategy::steps;
         a.eval_steps = 1;
         a.eval_delay = 5;
       },
       "on_log@1 on_log@5 on_evaluate@5 on_log@6 on_evaluate@6 on_log@6 "},
      {"ratio steps",
       [](TrainingArguments& a) {
         a.logging_steps = 0.5;  // ceil(6 * 0.5) = 3
         a.save_strategy = trainhook::SaveStrategy::steps;
         a.save_steps = 0.34;  // ceil(6 * 0.34) = 3
       },
       "on_log@3 on_save@3 on_log@6 on_save@6 on_log@6 "},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    TempDir dir("trainhook-loop-strategy");
    auto args = small_args(dir.path.string());
    args.max_steps = 6;  // 8 samples / batch 4: 2 steps per epoch, 3 epochs
    c.configure(args);
    std::vector<Recorded> events;
    Trainer trainer(tiny_model(2), args, synthetic_data(8), synthetic_data(8, 9),
                    plugin_free(recorder(&events)));
    trainer.train();
    CHECK(join(events, actions) == c.expected);
  }
}

TEST_CASE("eval_steps takes logging_steps only when evaluation runs by steps, as in HF") {
  for (const bool by_steps : {true, false}) {
    CAPTURE(by_steps);
    TempDir dir("trainhook-loop-eval-steps");
    auto args = small_args(dir.path.string());
    args.max_steps = 4;
    args.logging_steps = 2;
    if (by_steps) args.eval_strategy = trainhook::IntervalStrategy::steps;
    std::vector<Recorded> events;
    Trainer trainer(tiny_model(2), args, synthetic_data(8), synthetic_data(8, 9),
                    plugin_free(recorder(&events)));
    trainer.train();
    // HF's TrainerState keeps its default of 500 when TrainingArguments.eval_steps is None.
    CHECK(trainer.state().eval_steps == (by_steps ? 2 : 500));
    CHECK(join(events, {"on_evaluate"}) == (by_steps ? "on_evaluate@2 on_evaluate@4 " : ""));
  }
}

TEST_CASE("save_strategy best saves only on a new best metric") {
  TempDir dir("trainhook-loop-best");
  auto args = small_args(dir.path.string());
  args.max_steps = 6;
  args.eval_strategy = trainhook::IntervalStrategy::steps;
  args.eval_steps = 1;
  args.save_strategy = trainhook::SaveStrategy::best;
  args.metric_for_best_model = "score";
  std::vector<Recorded> events;
  auto options = plugin_free(recorder(&events));
  auto scores = std::make_shared<std::vector<double>>(std::vector<double>{0.5, 0.7, 0.6, 0.9, 0.8, 0.9});
  auto calls = std::make_shared<size_t>(0);
  options.compute_metrics = [scores, calls](const EvalPrediction&) {
    return Metrics{{"score", (*scores)[(*calls)++ % scores->size()]}};
  };
  Trainer trainer(tiny_model(3), args, synthetic_data(8), synthetic_data(8, 9), std::move(options));
  trainer.train();
  CHECK(join(events, {"on_save"}) == "on_save@1 on_save@2 on_save@4 ");
  REQUIRE(trainer.state().best_metric);
  CHECK(*trainer.state().best_metric == doctest::Approx(0.9));
  CHECK(trainer.state().best_global_step == 4);
  CHECK(*trainer.state().best_model_checkpoint == (dir.path / "checkpoint-4").string());
}

TEST_CASE("a stop request from a callback ends training after the current step") {
  TempDir dir("trainhook-loop-stop");
  auto args = small_args(dir.path.string());
  args.max_steps = 10;
  std::vector<Recorded> events;
  Trainer trainer(tiny_model(4), args, synthetic_data(16), nullptr, plugin_free(recorder(&events, 3)));
  const auto out = trainer.train();
  CHECK(out.global_step == 3);
  CHECK(join(events, {"on_epoch_end", "on_train_end"}) == "on_epoch_end@3 on_train_end@3 ");
}

TEST_CASE("accumulating 4 batches of 8 equals one batch of 32") {
  for (const auto optim : {trainhook::OptimizerName::sgd, trainhook::OptimizerName::adamw_torch}) {
    CAPTURE(trainhook::enum_name(optim));
    auto run = [&](int64_t batch, int64_t accum) {
      TempDir dir("trainhook-loop-accum");
      auto args = small_args(dir.path.string());
      args.optim = optim;
      args.learning_rate = 0.1;
      args.max_grad_norm = 0;
      args.max_steps = 2;
      args.logging_steps = 1;
      args.per_device_train_batch_size = batch;
      args.gradient_accumulation_steps = accum;
      auto model = tiny_model(5);
      Trainer trainer(model, args, synthetic_data(64), nullptr, plugin_free());
      trainer.train();
      return std::make_pair(parameters_of(*model), trainer.state().log_history[0]["loss"].get<double>());
    };
    const auto [whole, whole_loss] = run(32, 1);
    const auto [accumulated, accumulated_loss] = run(8, 4);
    REQUIRE(whole.size() == accumulated.size());
    for (size_t i = 0; i < whole.size(); ++i) {
      CHECK((whole[i] - accumulated[i]).abs().max().item<double>() < 1e-6);
    }
    CHECK(whole_loss == doctest::Approx(accumulated_loss).epsilon(1e-4));
  }
}

TEST_CASE("gradients are clipped to max_grad_norm and the norm before clipping is logged") {
  TempDir dir("trainhook-loop-clip");
  auto data = synthetic_data(16);
  auto args = small_args(dir.path.string());
  args.optim = trainhook::OptimizerName::sgd;
  args.learning_rate = 1.0;
  args.lr_scheduler_type = trainhook::SchedulerType::constant;
  args.max_grad_norm = 0.05;
  args.max_steps = 1;
  args.logging_steps = 1;
  args.per_device_train_batch_size = 16;  // the whole set: the order does not change the mean
  auto model = tiny_model(6);
  const auto before = parameters_of(*model);
  // The expected norm, from an independent forward/backward on a copy.
  auto reference = tiny_model(6);
  auto loss = reference->loss(reference->forward(data->inputs()), data->labels());
  loss.backward();
  double sq = 0;
  for (const auto& p : reference->module().parameters()) sq += p.grad().pow(2).sum().item<double>();
  const double expected_norm = std::sqrt(sq);
  REQUIRE(expected_norm > 0.05);

  Trainer trainer(model, args, data, nullptr, plugin_free());
  trainer.train();
  CHECK(trainer.state().log_history[0]["grad_norm"].get<double>() ==
        doctest::Approx(expected_norm).epsilon(1e-4));
  const auto after = parameters_of(*model);
  double delta_sq = 0;
  for (size_t i = 0; i < after.size(); ++i) delta_sq += (after[i] - before[i]).pow(2).sum().item<double>();
  CHECK(std::sqrt(delta_sq) == doctest::Approx(0.05).epsilon(1e-3));
}

TEST_CASE("the learning rate follows the schedule: each step logs the rate it used (newest transformers)") {
  TempDir dir("trainhook-loop-lr");
  auto args = small_args(dir.path.string());
  args.max_steps = 8;
  args.warmup_steps = 2;
  args.logging_steps = 1;
  args.lr_scheduler_type = trainhook::SchedulerType::linear;
  Trainer trainer(tiny_model(7), args, synthetic_data(32), nullptr, plugin_free());
  trainer.train();
  const auto& h = trainer.state().log_history;
  for (int64_t step = 1; step <= 8; ++step) {
    CAPTURE(step);
    CHECK(h[static_cast<size_t>(step - 1)]["learning_rate"].get<double>() ==
          doctest::Approx(1e-2 * lr_factor(SchedulerType::linear, step - 1, 2, 8)));
  }
}

TEST_CASE("the logged loss is not rounded (newest transformers)") {
  TempDir dir("trainhook-loop-loss-digits");
  auto args = small_args(dir.path.string());
  args.max_steps = 6;
  args.logging_steps = 1;
  Trainer trainer(tiny_model(3), args, synthetic_data(32), nullptr, plugin_free());
  trainer.train();
  int unrounded = 0;
  for (const auto& e : trainer.state().log_history) {
    if (!e.contains("loss")) continue;
    const double loss = e["loss"].get<double>();
    if (std::abs(loss * 1e4 - std::round(loss * 1e4)) > 1e-6) ++unrounded;
  }
  CHECK(unrounded > 0);
}

TEST_CASE("full determinism: one seed gives identical runs, another seed differs") {
  auto run = [](int64_t seed) {
    TempDir dir("trainhook-loop-determinism");
    auto args = small_args(dir.path.string());
    args.seed = seed;
    args.full_determinism = true;
    args.max_steps = 6;
    args.logging_steps = 1;
    auto model = tiny_model(seed, 0.3);  // dropout draws from the seeded generator
    Trainer trainer(model, args, synthetic_data(24), nullptr, plugin_free());
    trainer.train();
    std::vector<double> losses;
    for (const auto& e : trainer.state().log_history) {
      if (e.contains("loss")) losses.push_back(e["loss"].get<double>());
    }
    return std::make_pair(parameters_of(*model), losses);
  };
  const auto a = run(11);
  const auto b = run(11);
  const auto c = run(12);
  CHECK(a.second == b.second);
  bool all_equal = true, any_differs = false;
  for (size_t i = 0; i < a.first.size(); ++i) {
    all_equal = all_equal && torch::equal(a.first[i], b.first[i]);
    any_differs = any_differs || !torch::equal(a.first[i], c.first[i]);
  }
  CHECK(all_equal);
  CHECK(any_differs);
}

TEST_CASE("evaluate logs prefixed metrics then fires on_evaluate, predict fires on_predict without a log") {
  TempDir dir("trainhook-loop-eval");
  auto args = small_args(dir.path.string());
  std::vector<Recorded> events;
  auto options = plugin_free(recorder(&events));
  options.compute_metrics = accuracy_metrics;
  auto eval = synthetic_data(20, 3);
  Trainer trainer(tiny_model(8), args, synthetic_data(8), eval, std::move(options));
  const Metrics m = trainer.evaluate();
  for (const char* key :
       {"eval_loss", "eval_accuracy", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}) {
    CHECK(m.count(key) == 1);
  }
  CHECK(m.at("eval_accuracy") >= 0.0);
  CHECK(m.at("eval_accuracy") <= 1.0);
  // 20 samples in batches of 8: three prediction steps.
  CHECK(join(events, {"on_prediction_step", "on_log", "on_evaluate", "on_predict"}) ==
        "on_prediction_step@0 on_prediction_step@0 on_prediction_step@0 on_log@0 on_evaluate@0 ");
  REQUIRE(trainer.state().log_history.size() == 1);
  CHECK(trainer.state().log_history[0].contains("eval_accuracy"));

  events.clear();
  const PredictionOutput p = trainer.predict(eval);
  CHECK(p.predictions.sizes() == torch::IntArrayRef({20, 3}));
  CHECK(p.metrics.count("test_loss") == 1);
  CHECK(p.metrics.count("test_accuracy") == 1);
  CHECK(join(events, {"on_log", "on_predict"}) == "on_predict@0 ");
  CHECK(trainer.state().log_history.size() == 1);
}

TEST_CASE("memory metrics appear only when skip_memory_metrics is false") {
  for (const bool skip : {true, false}) {
    CAPTURE(skip);
    TempDir dir("trainhook-loop-memory");
    auto args = small_args(dir.path.string());
    args.max_steps = 2;
    args.skip_memory_metrics = skip;
    Trainer trainer(tiny_model(9), args, synthetic_data(8), nullptr, plugin_free());
    const auto out = trainer.train();
    CHECK(out.metrics.count("train_mem_cpu_alloc_delta") == (skip ? 0u : 1u));
    CHECK(out.metrics.count("train_mem_cpu_peaked_delta") == (skip ? 0u : 1u));
  }
}

TEST_CASE("host services give plugins the run and refuse a late resume request") {
  TempDir dir("trainhook-loop-host");
  auto args = small_args(dir.path.string());
  args.max_steps = 1;
  Trainer trainer(tiny_model(10), args, synthetic_data(8), nullptr, plugin_free());
  auto& host = trainer.host();
  CHECK(host.output_dir() == dir.path.string());
  CHECK(nlohmann::json::parse(host.training_args_json())["output_dir"] == dir.path.string());
  CHECK(host.set_resume_checkpoint((dir.path / "nowhere").string()).find("not a folder") !=
        std::string::npos);
  trainer.train();
  CHECK(nlohmann::json::parse(host.trainer_state_json())["global_step"] == 1);
  CHECK(host.set_resume_checkpoint(dir.path.string()).find("too late") != std::string::npos);
  CHECK(std::filesystem::exists(dir.path / "training_args.json"));
}

TEST_CASE("eval_on_start evaluates once before the first step") {
  TempDir dir("trainhook-loop-eval-on-start");
  auto args = small_args(dir.path.string());
  args.max_steps = 2;
  args.eval_on_start = true;
  std::vector<Recorded> events;
  Trainer trainer(tiny_model(8), args, synthetic_data(16), synthetic_data(8, 3),
                  plugin_free(recorder(&events)));
  trainer.train();
  CHECK(join(events, {"on_train_begin", "on_evaluate", "on_step_begin"})
            .rfind("on_train_begin@0 on_evaluate@0 on_step_begin@0 ", 0) == 0);
  REQUIRE_FALSE(trainer.state().log_history.empty());
  CHECK(trainer.state().log_history[0].contains("eval_loss"));
  args.eval_on_start = true;
  Trainer no_eval(tiny_model(8), args, synthetic_data(16), nullptr, plugin_free());
  CHECK_THROWS_WITH_AS(no_eval.train(), doctest::Contains("--eval_on_start"), std::invalid_argument);
}

TEST_CASE("group_by_length batches come from the length tensor and a missing one is named") {
  TempDir dir("trainhook-loop-group-by-length");
  auto args = small_args(dir.path.string());
  args.max_steps = 3;
  args.group_by_length = true;
  auto base = synthetic_data(48);
  std::vector<NamedTensor> tensors{{"input", base->inputs()},
                                   {"labels", base->labels()},
                                   {"length", torch::arange(48, torch::kLong).remainder(7)}};
  auto data = std::make_shared<TensorDataset>(tensors, "input", "labels");
  Trainer trainer(tiny_model(8), args, data, nullptr, plugin_free());
  CHECK_NOTHROW(trainer.train());
  args.length_column_name = "lengths";
  Trainer missing(tiny_model(8), args, data, nullptr, plugin_free());
  CHECK_THROWS_WITH_AS(missing.train(), doctest::Contains("no one-per-sample tensor 'lengths'"),
                       std::invalid_argument);
}
