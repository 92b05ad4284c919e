// Learning-rate schedules with warmup, as transformers' get_scheduler (4.47.1,
// optimization.py): the learning rate after `step` optimizer steps is
// base_lr × factor(step), a LambdaLR. No LibTorch here (the trainer applies the
// rate to its optimizer).
//
// reduce_lr_on_plateau is the exception: HF builds torch's ReduceLROnPlateau
// (no warmup, not stepped per optimizer step) and steps it with
// eval_<metric_for_best_model> after each evaluation during training. Its
// decision is the SDK's Plateau (trainhook/plateau.hpp, shared with the
// reduce_lr_on_plateau plugin) with torch semantics; LrScheduler keeps it.
#pragma once

#include <trainhook/args/strategies.hpp>
#include <trainhook/optim/schedule_options.hpp>
#include <trainhook/plateau.hpp>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// SchedulerType (args/strategies.hpp) is parsed with the arguments.

// The options a schedule takes from lr_scheduler_kwargs, with HF's defaults.
// Fields that a schedule does not use keep their defaults.
struct LrScheduleOptions {
  double num_cycles = 0.5;       // cosine, cosine_with_min_lr, warmup_stable_decay; cosine_with_restarts: 1
  double lr_end = 1e-7;          // polynomial
  double power = 1.0;            // polynomial
  double lr_init = 1.0;          // polynomial: learning_rate (HF's optimizer.defaults["lr"])
  double min_lr_rate = 0.0;      // cosine_with_min_lr (from min_lr / base_lr or min_lr_rate)
  int64_t num_stable_steps = 0;  // warmup_stable_decay
  int64_t num_decay_steps = 0;   // warmup_stable_decay
  double min_lr_ratio = 0.0;     // warmup_stable_decay
  // warmup_stable_decay's decay shape: cosine (4.47.1's only shape), or linear /
  // 1-sqrt (added by later transformers releases).
  std::string decay_type = "cosine";
  // reduce_lr_on_plateau: torch's ReduceLROnPlateau arguments (mode max =
  // greater_is_better, threshold_mode abs = relative_threshold false).
  PlateauOptions plateau = PlateauOptions().torch_semantics(true);
};

// The options of `type` from lr_scheduler_kwargs (a JSON object, or a string
// holding one, as HF accepts), checked as HF's schedule functions check them.
// Throws std::invalid_argument naming lr_scheduler_kwargs, the key and the
// schedule: an unknown key, a wrong type, a missing required key (min_lr or
// min_lr_rate, num_decay_steps), lr_end >= learning_rate. Keys of schedules
// whose HF function gets no kwargs (constant, constant_with_warmup,
// inverse_sqrt) are an error too, as HF would ignore them silently.
// total_steps gives warmup_stable_decay's num_stable_steps when it is absent
// (total − warmup − decay, as later transformers releases).
LrScheduleOptions lr_schedule_options(SchedulerType type, const nlohmann::json& kwargs, double base_lr,
                                      int64_t warmup_steps, int64_t total_steps);

// The keys lr_scheduler_kwargs may hold for `type` (for messages and --help).
std::vector<std::string> lr_schedule_keys(SchedulerType type);

// HF's lambdas: warmup step/max(1,warmup), then the schedule's shape.
double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps,
                 const LrScheduleOptions& options);
// With the default options (cosine_with_restarts: one cycle; polynomial: a base rate of 1).
double lr_factor(SchedulerType type, int64_t step, int64_t warmup_steps, int64_t total_steps);

// HF's get_warmup_steps: warmup_steps if > 0 (a value < 1 is a ratio of
// max_steps, rounded up, at least 1), else ceil(max_steps × warmup_ratio).
int64_t warmup_steps_for(const ScheduleOptions& options, int64_t max_steps);

// A LambdaLR: step() counts optimizer steps; lr() is the rate to use next.
class LrScheduler {
 public:
  // Without lr_scheduler_kwargs (cosine_with_min_lr and warmup_stable_decay need some: throws).
  LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps);
  // With options from lr_scheduler_kwargs (lr_schedule_options throws on bad ones).
  LrScheduler(SchedulerType type, double base_lr, int64_t warmup_steps, int64_t total_steps,
              const nlohmann::json& kwargs);
  // A run's schedule over total_steps optimizer steps (warmup_steps_for gives its warmup).
  LrScheduler(const ScheduleOptions& options, int64_t total_steps);
  void step() noexcept { ++step_; }
  double lr() const noexcept;
  int64_t last_step() const noexcept { return step_; }
  double base_lr() const noexcept { return base_lr_; }
  // True for reduce_lr_on_plateau: the rate moves with step_metrics, not step().
  bool metric_driven() const noexcept { return plateau_.has_value(); }
  // After an evaluation during training (HF's Trainer._evaluate): feeds
  // metrics[eval_<metric_for_best_model>] to the plateau; nothing for the other
  // schedules. Throws std::runtime_error naming metric_for_best_model and the
  // metrics there are when the metric is missing (HF's KeyError).
  void step_metrics(const std::map<std::string, double>& metrics,
                    const std::optional<std::string>& metric_for_best_model);
  // One metric value (what step_metrics feeds; the reference test's entry).
  void step_metric(double value);
  nlohmann::json state() const;
  // Throws std::runtime_error when the state does not fit this schedule.
  void load_state(const nlohmann::json& state);

 private:
  SchedulerType type_;
  double base_lr_;
  int64_t warmup_;
  int64_t total_;
  LrScheduleOptions options_;
  int64_t step_ = 0;
  std::optional<Plateau> plateau_;  // reduce_lr_on_plateau only
  double plateau_lr_ = 0;           // its current rate
};

}  // namespace trainhook
