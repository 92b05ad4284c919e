// sdk/include/trainhook/plateau.hpp: ReduceLROnPlateau's decision (Keras
// semantics: reduce after `patience` values in a row without improvement).
#include <trainhook/plateau.hpp>

#include <doctest/doctest.h>

#include <cmath>

using trainhook::Plateau;
using trainhook::PlateauOptions;

TEST_CASE("reduces by factor after patience flat values, then counts again") {
  Plateau p(PlateauOptions().factor(0.5).patience(2));
  double lr = 1.0;
  CHECK_FALSE(p.step(1.0, lr));  // the first value is the best
  CHECK_FALSE(p.step(1.0, lr));  // 1 flat
  auto r = p.step(1.0, lr);      // 2 flat: reduce
  REQUIRE(r);
  CHECK(*r == 0.5);
  lr = *r;
  CHECK_FALSE(p.step(1.0, lr));
  r = p.step(1.0, lr);
  REQUIRE(r);
  CHECK(*r == 0.25);
  CHECK(p.state().reductions == 2);
}

TEST_CASE("an improvement resets the counter; the threshold decides what improves") {
  Plateau rel(PlateauOptions().factor(0.5).patience(2).threshold(0.1));
  CHECK_FALSE(rel.step(1.0, 1));
  CHECK_FALSE(rel.step(0.95, 1));  // within 10%: not an improvement (1 flat)
  CHECK_FALSE(rel.step(0.85, 1));  // better by more than 10%: best = 0.85, counter 0
  CHECK(rel.state().best == 0.85);
  CHECK(rel.state().num_bad == 0);
  Plateau abs(PlateauOptions().patience(1).threshold(0.5).relative_threshold(false).greater_is_better(true));
  CHECK_FALSE(abs.step(1.0, 1));
  CHECK(abs.step(1.4, 1));  // not above 1.5
}

TEST_CASE("cooldown, min_lr, NaN values and restoring the state") {
  Plateau p(PlateauOptions().factor(0.1).patience(1).cooldown(2).min_lr(0.05));
  CHECK_FALSE(p.step(1, 1));
  auto r = p.step(1, 1);
  REQUIRE(r);
  CHECK(*r == doctest::Approx(0.1));
  CHECK_FALSE(p.step(1, 0.1));  // cooldown 2 -> 1: ignored
  r = p.step(1, 0.1);           // cooldown 1 -> 0, then counted (Keras)
  REQUIRE(r);
  CHECK(*r == 0.05);             // clamped at min_lr
  CHECK_FALSE(p.step(1, 0.05));  // cooldown
  CHECK_FALSE(p.step(std::nan(""), 0.05));
  Plateau q(PlateauOptions().factor(0.1).patience(1).cooldown(2).min_lr(0.05));
  q.restore(p.state());
  CHECK(q.state().best == p.state().best);
  CHECK(q.state().cooldown_counter == p.state().cooldown_counter);
  CHECK_THROWS_AS(PlateauOptions().factor(1.0), std::invalid_argument);
  CHECK_THROWS_AS(PlateauOptions().patience(0), std::invalid_argument);
}
