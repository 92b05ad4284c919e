// ReduceLROnPlateau's decision, header-only and standard library only, so the
// reduce_lr_on_plateau plugin and a future core lr_scheduler_type
// reduce_lr_on_plateau share one implementation.
//
// Semantics (Keras ReduceLROnPlateau, with PyTorch's relative threshold as the
// default): the first value sets the best; a value improves on the best when it
// is better by more than `threshold` (relative: best * threshold; absolute:
// threshold). After `patience` values in a row without improvement the learning
// rate becomes max(lr * factor, min_lr), then `cooldown` values are ignored
// (the counter stays at 0) before counting starts again.
//
//   trainhook::Plateau p(trainhook::PlateauOptions().factor(0.5).patience(2));
//   if (auto lr = p.step(eval_loss, current_lr)) set_lr(*lr);
#ifndef TRAINHOOK_PLATEAU_HPP
#define TRAINHOOK_PLATEAU_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace trainhook {

class PlateauOptions {
 public:
  // 0 < factor < 1.
  PlateauOptions& factor(double f) {
    if (!(f > 0 && f < 1))
      throw std::invalid_argument("factor: expected a number in (0, 1), got " + std::to_string(f));
    factor_ = f;
    return *this;
  }
  PlateauOptions& patience(int64_t p) {
    if (p < 1) throw std::invalid_argument("patience: expected an integer >= 1, got " + std::to_string(p));
    patience_ = p;
    return *this;
  }
  PlateauOptions& threshold(double t) {
    if (!(t >= 0) || !std::isfinite(t))
      throw std::invalid_argument("threshold: expected a finite number >= 0, got " + std::to_string(t));
    threshold_ = t;
    return *this;
  }
  // true: relative to the best (PyTorch's "rel", the default); false: absolute.
  PlateauOptions& relative_threshold(bool r) {
    relative_ = r;
    return *this;
  }
  PlateauOptions& cooldown(int64_t c) {
    if (c < 0) throw std::invalid_argument("cooldown: expected an integer >= 0, got " + std::to_string(c));
    cooldown_ = c;
    return *this;
  }
  PlateauOptions& min_lr(double m) {
    if (!(m >= 0) || !std::isfinite(m))
      throw std::invalid_argument("min_lr: expected a finite number >= 0, got " + std::to_string(m));
    min_lr_ = m;
    return *this;
  }
  PlateauOptions& greater_is_better(bool g) {
    greater_ = g;
    return *this;
  }
  double factor() const noexcept { return factor_; }
  int64_t patience() const noexcept { return patience_; }
  double threshold() const noexcept { return threshold_; }
  bool relative_threshold() const noexcept { return relative_; }
  int64_t cooldown() const noexcept { return cooldown_; }
  double min_lr() const noexcept { return min_lr_; }
  bool greater_is_better() const noexcept { return greater_; }

 private:
  double factor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  bool relative_ = true;
  int64_t cooldown_ = 0;
  double min_lr_ = 0;
  bool greater_ = false;
};

// What a checkpoint keeps of a Plateau.
struct PlateauState {
  bool has_best = false;
  double best = 0;
  int64_t num_bad = 0;           // values in a row without improvement
  int64_t cooldown_counter = 0;  // values still to ignore after a reduction
  int64_t reductions = 0;
};

class Plateau {
 public:
  explicit Plateau(PlateauOptions options = {}) : o_(options) {}

  // True when `value` improves on the best (always for the first value).
  bool improves(double value) const {
    if (!s_.has_best) return true;
    const double margin = o_.relative_threshold() ? std::abs(s_.best) * o_.threshold() : o_.threshold();
    return o_.greater_is_better() ? value > s_.best + margin : value < s_.best - margin;
  }

  // One evaluation. Returns the new learning rate when it is reduced (never
  // below min_lr; no reduction when lr is already at or below min_lr).
  std::optional<double> step(double value, double lr) {
    if (!std::isfinite(value)) return std::nullopt;  // a NaN metric neither improves nor counts
    if (s_.cooldown_counter > 0) {
      --s_.cooldown_counter;
      s_.num_bad = 0;
    }
    if (improves(value)) {
      s_.has_best = true;
      s_.best = value;
      s_.num_bad = 0;
      return std::nullopt;
    }
    if (s_.cooldown_counter > 0) return std::nullopt;
    if (++s_.num_bad < o_.patience()) return std::nullopt;
    s_.num_bad = 0;
    const double reduced = std::max(lr * o_.factor(), o_.min_lr());
    if (!(reduced < lr)) return std::nullopt;
    s_.cooldown_counter = o_.cooldown();
    ++s_.reductions;
    return reduced;
  }

  const PlateauOptions& options() const noexcept { return o_; }
  const PlateauState& state() const noexcept { return s_; }
  void restore(const PlateauState& s) { s_ = s; }

 private:
  PlateauOptions o_;
  PlateauState s_;
};

}  // namespace trainhook

#endif  // TRAINHOOK_PLATEAU_HPP
