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
// torch_semantics(true) selects torch.optim.lr_scheduler.ReduceLROnPlateau
// (torch 1.13, what HF's lr_scheduler_type reduce_lr_on_plateau builds), step
// for step: reduce when more than `patience` values in a row did not improve
// (patience 0 allowed); the improvement test comes before the cooldown count;
// a relative threshold is best * (1 -/+ threshold) (not |best| * threshold); a
// non-finite value is compared like any other (NaN never improves and counts as
// bad); a reduction smaller than `eps` leaves the rate as it is but still
// starts the cooldown. The default (false) keeps the plugin's Keras behaviour.
//
//   trainhook::Plateau p(trainhook::PlateauOptions().factor(0.5).patience(2));
//   if (auto lr = p.step(eval_loss, current_lr)) set_lr(*lr);
#ifndef TRAINHOOK_PLATEAU_HPP
#define TRAINHOOK_PLATEAU_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
  // >= 1; >= 0 with torch_semantics (set that first).
  PlateauOptions& patience(int64_t p) {
    const int64_t least = torch_ ? 0 : 1;
    if (p < least)
      throw std::invalid_argument("patience: expected an integer >= " + std::to_string(least) + ", got " +
                                  std::to_string(p));
    patience_ = p;
    return *this;
  }
  // torch's counting and comparisons (see the top of this file).
  PlateauOptions& torch_semantics(bool t) {
    if (!t && patience_ < 1)
      throw std::invalid_argument("patience: expected an integer >= 1 without torch semantics, got " +
                                  std::to_string(patience_));
    torch_ = t;
    return *this;
  }
  // torch's eps: a reduction of eps or less is not made (torch_semantics only).
  PlateauOptions& eps(double e) {
    if (!(e >= 0) || !std::isfinite(e))
      throw std::invalid_argument("eps: expected a finite number >= 0, got " + std::to_string(e));
    eps_ = e;
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
  bool torch_semantics() const noexcept { return torch_; }
  double eps() const noexcept { return eps_; }

 private:
  double factor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  bool relative_ = true;
  int64_t cooldown_ = 0;
  double min_lr_ = 0;
  bool greater_ = false;
  bool torch_ = false;
  double eps_ = 1e-8;
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
    if (o_.torch_semantics()) return improves_torch(value);
    if (!s_.has_best) return true;
    const double margin = o_.relative_threshold() ? std::abs(s_.best) * o_.threshold() : o_.threshold();
    return o_.greater_is_better() ? value > s_.best + margin : value < s_.best - margin;
  }

  // One evaluation. Returns the new learning rate when it is reduced (never
  // below min_lr; no reduction when lr is already at or below min_lr).
  std::optional<double> step(double value, double lr) {
    if (o_.torch_semantics()) return step_torch(value, lr);
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
  // torch: best starts at +inf (min) / -inf (max), so any value but NaN and
  // the infinity itself improves on "no best".
  bool improves_torch(double value) const {
    const double inf = std::numeric_limits<double>::infinity();
    const double best = s_.has_best ? s_.best : (o_.greater_is_better() ? -inf : inf);
    const double t = o_.threshold();
    if (o_.greater_is_better()) return o_.relative_threshold() ? value > best * (1.0 + t) : value > best + t;
    return o_.relative_threshold() ? value < best * (1.0 - t) : value < best - t;
  }

  std::optional<double> step_torch(double value, double lr) {
    if (improves_torch(value)) {
      s_.has_best = true;
      s_.best = value;
      s_.num_bad = 0;
    } else {
      ++s_.num_bad;
    }
    if (s_.cooldown_counter > 0) {
      --s_.cooldown_counter;
      s_.num_bad = 0;  // bad values in the cooldown are ignored
    }
    if (s_.num_bad <= o_.patience()) return std::nullopt;
    s_.cooldown_counter = o_.cooldown();
    s_.num_bad = 0;
    const double reduced = std::max(lr * o_.factor(), o_.min_lr());
    if (!(lr - reduced > o_.eps())) return std::nullopt;
    ++s_.reductions;
    return reduced;
  }

  PlateauOptions o_;
  PlateauState s_;
};

}  // namespace trainhook

#endif  // TRAINHOOK_PLATEAU_HPP
