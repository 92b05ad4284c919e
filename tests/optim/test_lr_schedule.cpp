// The four learning-rate schedules with warmup (transformers get_scheduler).
#include <trainhook/optim/lr_schedule.hpp>

#include <doctest/doctest.h>

using namespace trainhook;

TEST_CASE("linear: warmup from 0, then straight down to 0 at the last step") {
  CHECK(lr_factor(SchedulerType::linear, 0, 4, 20) == 0.0);
  CHECK(lr_factor(SchedulerType::linear, 2, 4, 20) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::linear, 4, 4, 20) == doctest::Approx(1.0));
  CHECK(lr_factor(SchedulerType::linear, 12, 4, 20) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::linear, 20, 4, 20) == doctest::Approx(0.0));
  CHECK(lr_factor(SchedulerType::linear, 25, 4, 20) == 0.0);
  CHECK(lr_factor(SchedulerType::linear, 0, 0, 10) == doctest::Approx(1.0));
}

TEST_CASE("cosine: warmup, then half a cosine period to 0") {
  CHECK(lr_factor(SchedulerType::cosine, 1, 2, 12) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::cosine, 2, 2, 12) == doctest::Approx(1.0));
  CHECK(lr_factor(SchedulerType::cosine, 7, 2, 12) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::cosine, 12, 2, 12) == doctest::Approx(0.0));
  // Between, 0.5 * (1 + cos(pi * progress)).
  CHECK(lr_factor(SchedulerType::cosine, 4, 2, 12) == doctest::Approx(0.5 * (1 + std::cos(M_PI * 0.2))));
}

TEST_CASE("constant ignores warmup, constant_with_warmup warms up then stays") {
  for (int64_t s : {0, 1, 5, 100}) CHECK(lr_factor(SchedulerType::constant, s, 10, 50) == 1.0);
  CHECK(lr_factor(SchedulerType::constant_with_warmup, 0, 10, 50) == 0.0);
  CHECK(lr_factor(SchedulerType::constant_with_warmup, 5, 10, 50) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::constant_with_warmup, 10, 10, 50) == 1.0);
  CHECK(lr_factor(SchedulerType::constant_with_warmup, 50, 10, 50) == 1.0);
}

TEST_CASE("warmup steps: warmup_steps wins, values below 1 and warmup_ratio are ratios rounded up") {
  ScheduleOptions a;
  CHECK(warmup_steps_for(a, 100) == 0);
  a.warmup_steps(7).warmup_ratio(0.5);
  CHECK(warmup_steps_for(a, 100) == 7);
  a.warmup_steps(0.1);
  CHECK(warmup_steps_for(a, 95) == 10);
  a.warmup_steps(0.07);
  CHECK(warmup_steps_for(a, 100) == 7);  // not 8 from 7.000000000000001
  a.warmup_steps(0.001);
  CHECK(warmup_steps_for(a, 10) == 1);  // a warmup asked for is at least one step
  a.warmup_steps(0);
  CHECK(warmup_steps_for(a, 11) == 6);
  CHECK(warmup_steps_for(a, 15) == 8);  // ceil(7.5)
  a.warmup_ratio(0.01);
  CHECK(warmup_steps_for(a, 10) == 1);  // ceil(0.1)
  a.warmup_ratio(0);
  CHECK(warmup_steps_for(a, 11) == 0);
}

TEST_CASE("a schedule from ScheduleOptions: its warmup resolved against the run's steps") {
  const auto options = ScheduleOptions().type(SchedulerType::linear).learning_rate(0.1).warmup_ratio(0.2);
  const LrScheduler from_options(options, 10);
  const LrScheduler spelled_out(SchedulerType::linear, 0.1, 2, 10);
  CHECK(from_options.lr() == spelled_out.lr());
  LrScheduler a(options, 10), b(SchedulerType::linear, 0.1, 2, 10);
  for (int i = 0; i < 5; ++i) {
    a.step();
    b.step();
    CHECK(a.lr() == doctest::Approx(b.lr()));
  }
  CHECK(a.lr() == doctest::Approx(0.1 * 5.0 / 8.0));
}

TEST_CASE("the scheduler counts steps, saves and restores them") {
  LrScheduler s(SchedulerType::linear, 0.1, 2, 10);
  CHECK(s.lr() == 0.0);
  s.step();
  CHECK(s.lr() == doctest::Approx(0.05));
  s.step();
  s.step();
  LrScheduler t(SchedulerType::linear, 0.1, 2, 10);
  t.load_state(s.state());
  CHECK(t.last_step() == 3);
  CHECK(t.lr() == doctest::Approx(s.lr()));
  CHECK_THROWS_WITH_AS(t.load_state(nlohmann::json::object()), doctest::Contains("last_step"),
                       std::runtime_error);
}

TEST_CASE("scheduler names are HF's") {
  CHECK(parse_enum<SchedulerType>("cosine") == SchedulerType::cosine);
  CHECK(parse_enum<SchedulerType>("constant_with_warmup") == SchedulerType::constant_with_warmup);
  CHECK_FALSE(parse_enum<SchedulerType>("cosin").has_value());
  CHECK(std::string(enum_name(SchedulerType::linear)) == "linear");
}

// The schedules beyond linear and constant (HF's get_scheduler). Their
// agreement with transformers 4.47.1 at every step is checked by trainer_hf_reference_lr (hf_reference_check.py);
// these cases pin the shapes and the kwargs errors without the HF venv.
namespace {
LrScheduleOptions options(SchedulerType type, const char* kwargs, double lr = 0.01, int64_t warmup = 10,
                          int64_t total = 100) {
  return lr_schedule_options(type, nlohmann::json::parse(kwargs), lr, warmup, total);
}
std::string error_of(SchedulerType type, const char* kwargs, double lr = 0.01) {
  try {
    options(type, kwargs, lr);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("cosine_with_restarts: num_cycles hard restarts, 0 at the end") {
  const auto o = options(SchedulerType::cosine_with_restarts, R"({"num_cycles": 2})", 1, 0, 100);
  CHECK(lr_factor(SchedulerType::cosine_with_restarts, 0, 0, 100, o) == doctest::Approx(1.0));
  CHECK(lr_factor(SchedulerType::cosine_with_restarts, 25, 0, 100, o) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::cosine_with_restarts, 50, 0, 100, o) == doctest::Approx(1.0));  // restart
  CHECK(lr_factor(SchedulerType::cosine_with_restarts, 100, 0, 100, o) == 0.0);
  // Without kwargs: one cycle (HF's default num_cycles = 1), i.e. cosine.
  CHECK(lr_factor(SchedulerType::cosine_with_restarts, 30, 0, 100) ==
        doctest::Approx(lr_factor(SchedulerType::cosine, 30, 0, 100)));
}

TEST_CASE("polynomial: from the rate to lr_end, then lr_end") {
  LrScheduler s(SchedulerType::polynomial, 0.01, 0, 10,
                nlohmann::json::parse(R"({"lr_end": 0.001, "power": 2})"));
  CHECK(s.lr() == doctest::Approx(0.01));
  for (int i = 0; i < 5; ++i) s.step();
  CHECK(s.lr() == doctest::Approx(0.009 * 0.25 + 0.001));
  for (int i = 0; i < 10; ++i) s.step();
  CHECK(s.lr() == doctest::Approx(0.001));
}

TEST_CASE("inverse_sqrt: 1/sqrt(step/warmup) after warmup, timescale 10000 without warmup") {
  CHECK(lr_factor(SchedulerType::inverse_sqrt, 40, 10, 100) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::inverse_sqrt, 20000, 0, 100) == doctest::Approx(1 / std::sqrt(3.0)));
}

TEST_CASE("cosine_with_min_lr: down to min_lr (or min_lr_rate × the rate)") {
  LrScheduler a(SchedulerType::cosine_with_min_lr, 0.01, 0, 10,
                nlohmann::json::parse(R"({"min_lr": 0.002})"));
  LrScheduler b(SchedulerType::cosine_with_min_lr, 0.01, 0, 10,
                nlohmann::json::parse(R"({"min_lr_rate": 0.2})"));
  for (int i = 0; i < 10; ++i) a.step(), b.step();
  CHECK(a.lr() == doctest::Approx(0.002));
  CHECK(b.lr() == doctest::Approx(0.002));
}

TEST_CASE("warmup_stable_decay: warmup, stable, decay (cosine, linear, 1-sqrt), then min_lr_ratio") {
  const auto cos = options(SchedulerType::warmup_stable_decay,
                           R"({"num_stable_steps": 20, "num_decay_steps": 40, "min_lr_ratio": 0.1})");
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 5, 10, 100, cos) == doctest::Approx(0.5));
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 29, 10, 100, cos) == 1.0);
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 50, 10, 100, cos) == doctest::Approx(0.55));
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 70, 10, 100, cos) == doctest::Approx(0.1));
  const auto lin = options(SchedulerType::warmup_stable_decay,
                           R"({"num_stable_steps": 20, "num_decay_steps": 40, "decay_type": "linear"})");
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 40, 10, 100, lin) == doctest::Approx(0.75));
  const auto sq = options(SchedulerType::warmup_stable_decay,
                          R"({"num_stable_steps": 20, "num_decay_steps": 40, "decay_type": "1-sqrt"})");
  CHECK(lr_factor(SchedulerType::warmup_stable_decay, 40, 10, 100, sq) == doctest::Approx(0.5));
  // Without num_stable_steps: what is left of max_steps (later transformers releases).
  CHECK(options(SchedulerType::warmup_stable_decay, R"({"num_decay_steps": 30})").num_stable_steps == 60);
}

TEST_CASE("lr_scheduler_kwargs errors name the key, the schedule and what was expected") {
  std::string e = error_of(SchedulerType::linear, R"({"power": 2})");
  CHECK(e.find("'power'") != std::string::npos);
  CHECK(e.find("linear") != std::string::npos);
  e = error_of(SchedulerType::polynomial, R"({"pwoer": 2})");
  CHECK(e.find("'pwoer'") != std::string::npos);
  CHECK(e.find("lr_end, power") != std::string::npos);
  CHECK(error_of(SchedulerType::polynomial, R"({"lr_end": 0.5})").find("smaller than learning_rate") !=
        std::string::npos);
  CHECK(error_of(SchedulerType::cosine_with_min_lr, "{}").find("min_lr_rate") != std::string::npos);
  CHECK(error_of(SchedulerType::warmup_stable_decay, R"({"num_decay_steps": 95})").find("exceed max_steps") !=
        std::string::npos);
  CHECK(error_of(SchedulerType::warmup_stable_decay, R"({"num_decay_steps": 2.5})").find("whole number") !=
        std::string::npos);
  CHECK(error_of(SchedulerType::cosine, "[1]").find("JSON object") != std::string::npos);
  // The JSON text of a flag is accepted as HF accepts it.
  CHECK(lr_schedule_options(SchedulerType::cosine, nlohmann::json("{\"num_cycles\": 2}"), 1, 0, 10)
            .num_cycles == 2.0);
  CHECK(parse_enum<SchedulerType>("warmup_stable_decay") == SchedulerType::warmup_stable_decay);
}

TEST_CASE("reduce_lr_on_plateau: torch's ReduceLROnPlateau kwargs, no warmup, moved by metrics only") {
  const auto o = options(SchedulerType::reduce_lr_on_plateau,
                         R"({"mode": "max", "factor": 0.5, "patience": 0, "threshold": 0.01,
                             "threshold_mode": "abs", "cooldown": 1, "min_lr": 0.2, "eps": 0})");
  CHECK(o.plateau.torch_semantics());
  CHECK(o.plateau.greater_is_better());
  CHECK_FALSE(o.plateau.relative_threshold());
  CHECK(o.plateau.factor() == 0.5);
  CHECK(o.plateau.patience() == 0);
  CHECK(o.plateau.cooldown() == 1);
  CHECK(o.plateau.min_lr() == 0.2);
  CHECK(o.plateau.eps() == 0);
  // torch's defaults: mode min, factor 0.1, patience 10, rel 1e-4.
  const auto d = options(SchedulerType::reduce_lr_on_plateau, "{}");
  CHECK_FALSE(d.plateau.greater_is_better());
  CHECK(d.plateau.factor() == 0.1);
  CHECK(d.plateau.patience() == 10);
  CHECK(d.plateau.relative_threshold());
  CHECK(lr_factor(SchedulerType::reduce_lr_on_plateau, 3, 10, 100) == 1.0);  // HF gives it no warmup

  LrScheduler s(SchedulerType::reduce_lr_on_plateau, 1.0, 10, 100,
                nlohmann::json::parse(R"({"factor": 0.5, "patience": 1})"));
  CHECK(s.metric_driven());
  for (int i = 0; i < 50; ++i) s.step();
  CHECK(s.lr() == 1.0);                                // optimizer steps do not move it
  s.step_metrics({{"eval_loss", 2.0}}, std::nullopt);  // metric_for_best_model defaults to loss
  s.step_metrics({{"eval_loss", 2.0}}, std::string("loss"));
  CHECK(s.lr() == 1.0);
  s.step_metrics({{"eval_loss", 2.0}}, std::string("eval_loss"));  // 2 bad > 1
  CHECK(s.lr() == 0.5);
  s.step_metric(2.0);
  // The state holds the plateau: a scheduler loaded from it continues identically.
  LrScheduler r(SchedulerType::reduce_lr_on_plateau, 1.0, 10, 100,
                nlohmann::json::parse(R"({"factor": 0.5, "patience": 1})"));
  r.load_state(nlohmann::json::parse(s.state().dump()));
  CHECK(r.lr() == 0.5);
  s.step_metric(2.0);
  r.step_metric(2.0);
  CHECK(s.lr() == 0.25);
  CHECK(r.lr() == 0.25);
  LrScheduler lin(SchedulerType::linear, 1.0, 0, 10);
  CHECK_FALSE(lin.metric_driven());
  CHECK_THROWS_AS(r.load_state(lin.state()), std::runtime_error);  // no plateau in a linear checkpoint
}

TEST_CASE("reduce_lr_on_plateau errors name the key or metric_for_best_model") {
  std::string e = error_of(SchedulerType::reduce_lr_on_plateau, R"({"mode": "maximum"})");
  CHECK(e.find("'mode'") != std::string::npos);
  CHECK(e.find("\"min\" or \"max\"") != std::string::npos);
  e = error_of(SchedulerType::reduce_lr_on_plateau, R"({"factor": 1.0})");
  CHECK(e.find("'factor'") != std::string::npos);
  CHECK(e.find("reduce_lr_on_plateau") != std::string::npos);
  CHECK(error_of(SchedulerType::reduce_lr_on_plateau, R"({"threshold_mode": "relative"})").find("\"abs\"") !=
        std::string::npos);
  CHECK(error_of(SchedulerType::reduce_lr_on_plateau, R"({"patience": -1})").find("'patience'") !=
        std::string::npos);
  CHECK(error_of(SchedulerType::reduce_lr_on_plateau, R"({"num_cycles": 1})").find("min_lr, eps") !=
        std::string::npos);
  LrScheduler s(SchedulerType::reduce_lr_on_plateau, 1.0, 0, 10);
  try {
    s.step_metrics({{"eval_loss", 1.0}}, std::string("accuracy"));
    FAIL("no error");
  } catch (const std::runtime_error& ex) {
    const std::string m = ex.what();
    CHECK(m.find("eval_accuracy") != std::string::npos);
    CHECK(m.find("metric_for_best_model") != std::string::npos);
    CHECK(m.find("eval_loss") != std::string::npos);
  }
  CHECK(parse_enum<SchedulerType>("reduce_lr_on_plateau") == SchedulerType::reduce_lr_on_plateau);
}
