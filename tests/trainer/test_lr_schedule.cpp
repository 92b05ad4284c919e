// The four learning-rate schedules with warmup (transformers get_scheduler).
#include <trainhook/trainer/lr_schedule.hpp>

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
  TrainingArguments a;
  a.warmup_steps = 7;
  a.warmup_ratio = 0.5;
  CHECK(warmup_steps_for(a, 100) == 7);
  a.warmup_steps = 0.1;
  CHECK(warmup_steps_for(a, 95) == 10);
  a.warmup_steps = 0;
  CHECK(warmup_steps_for(a, 11) == 6);
  a.warmup_ratio = 0;
  CHECK(warmup_steps_for(a, 11) == 0);
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
