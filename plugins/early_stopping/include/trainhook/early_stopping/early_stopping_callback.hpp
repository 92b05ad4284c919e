// HF EarlyStoppingCallback: stops training after `patience` evaluations whose
// metric_for_best_model did not beat the best so far by more than `threshold`.
//
// The best it compares with is th_state.best_metric, which the trainer updates
// after on_evaluate, so each evaluation is compared with the previous best (as
// in HF). The counter is stateful: saved in checkpoints under
// stateful_callbacks["early_stopping"] and restored on resume.
#pragma once

#include <trainhook/early_stopping/early_stopping_options.hpp>

#include <trainhook/plugin.hpp>

#include <cstdint>
#include <string>

namespace trainhook::early_stopping {

class EarlyStoppingCallback final : public trainhook::Callback {
 public:
  explicit EarlyStoppingCallback(trainhook::Setup& setup);
  EarlyStoppingCallback(const trainhook::Host& host, const EarlyStoppingOptions& options);

  void on_train_begin(trainhook::Event& e) override;
  void on_evaluate(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;
  std::string save_state() override;
  void load_state(const std::string& state_json) override;

  int64_t counter() const noexcept { return counter_; }

 private:
  // Reads metric_for_best_model / greater_is_better / eval_strategy /
  // load_best_model_at_end from the host's training arguments.
  void read_arguments(bool strict);
  // HF check_metric_value: reset on improvement (or no best yet), else count.
  void check_metric_value(const th_state& state, double value);

  trainhook::Host host_;
  EarlyStoppingOptions options_;
  bool configured_ = false;
  std::string metric_;  // with the eval_ prefix
  bool greater_is_better_ = true;
  int64_t counter_ = 0;
  bool warned_missing_ = false;
  bool training_ = false;  // between train begin and end: only then is a stop worth announcing
};

}  // namespace trainhook::early_stopping
