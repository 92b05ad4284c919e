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

TEST_CASE("an improvement resets the counter, and the threshold decides what improves") {
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

// torch_semantics: torch.optim.lr_scheduler.ReduceLROnPlateau (what HF's
// lr_scheduler_type reduce_lr_on_plateau builds).
TEST_CASE("torch semantics: reduce when more than patience values did not improve") {
  Plateau p(PlateauOptions().torch_semantics(true).factor(0.5).patience(2));
  CHECK_FALSE(p.step(1.0, 1));  // best
  CHECK_FALSE(p.step(1.0, 1));  // 1 bad
  CHECK_FALSE(p.step(1.0, 1));  // 2 bad: Keras would reduce here, torch waits for > 2
  auto r = p.step(1.0, 1);      // 3 bad
  REQUIRE(r);
  CHECK(*r == 0.5);
  // The Keras default is untouched by the option's existence.
  Plateau k(PlateauOptions().factor(0.5).patience(2));
  k.step(1.0, 1);
  k.step(1.0, 1);
  CHECK(k.step(1.0, 1));
}

TEST_CASE("torch semantics: patience 0, improvement tested before the cooldown count, NaN counts as bad") {
  CHECK_THROWS_AS(PlateauOptions().patience(0), std::invalid_argument);
  CHECK_THROWS_AS(PlateauOptions().torch_semantics(true).patience(0).torch_semantics(false),
                  std::invalid_argument);
  Plateau p(PlateauOptions().torch_semantics(true).factor(0.5).patience(0).cooldown(1));
  CHECK_FALSE(p.step(1, 1));
  auto r = p.step(1, 1);  // 1 bad > 0
  REQUIRE(r);
  CHECK(*r == 0.5);
  CHECK(p.state().cooldown_counter == 1);
  CHECK_FALSE(p.step(1, 0.5));  // bad, then the cooldown (1 -> 0) clears the count
  CHECK(p.state().num_bad == 0);
  r = p.step(1, 0.5);  // out of the cooldown: 1 bad > 0
  REQUIRE(r);
  CHECK(*r == 0.25);
  Plateau n(PlateauOptions().torch_semantics(true).patience(0));
  r = n.step(std::nan(""), 1);  // no best yet (torch: inf); NaN does not improve: 1 bad > 0
  REQUIRE(r);
  CHECK(*r == doctest::Approx(0.1));
  CHECK_FALSE(n.state().has_best);
  Plateau keras(PlateauOptions().patience(1));
  CHECK_FALSE(keras.step(std::nan(""), 1));  // Keras skips a NaN
}

TEST_CASE("torch semantics: relative threshold is best * (1 - threshold), eps keeps tiny reductions out") {
  Plateau t(PlateauOptions().torch_semantics(true).threshold(0.1).patience(5));
  t.step(-1.0, 1);
  CHECK(t.improves(-0.95));  // below -1 * 0.9; Keras asks for below -1.1
  Plateau k(PlateauOptions().threshold(0.1).patience(5));
  k.step(-1.0, 1);
  CHECK_FALSE(k.improves(-0.95));
  Plateau m(PlateauOptions().torch_semantics(true).threshold(0.1).greater_is_better(true).patience(5));
  m.step(2.0, 1);
  CHECK_FALSE(m.improves(2.2));  // not above 2 * 1.1
  CHECK(m.improves(2.21));
  Plateau e(PlateauOptions().torch_semantics(true).factor(0.5).patience(0).cooldown(2).eps(1e-8));
  e.step(1, 1e-9);
  CHECK_FALSE(e.step(1, 1e-9));            // 5e-10 less: under eps, no change...
  CHECK(e.state().cooldown_counter == 2);  // ...but torch still starts the cooldown
  CHECK(e.state().reductions == 0);
}
