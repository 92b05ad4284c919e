// HF ProgressCallback: a training bar, an evaluation/prediction bar, and the
// logs printed above the bar. World-zero process only. Drawing happens on the
// Display's thread; the events here only record numbers or queue lines.
#pragma once

#include <trainhook/progress/display.hpp>

#include <trainhook/plugin.hpp>

#include <optional>

namespace trainhook::progress {

class ProgressCallback final : public trainhook::Callback {
 public:
  explicit ProgressCallback(trainhook::Setup& setup);
  ProgressCallback(const trainhook::Host& host, const DisplayOptions& options);

  void on_train_begin(trainhook::Event& e) override;
  void on_step_end(trainhook::Event& e) override;
  void on_prediction_step(trainhook::Event& e) override;
  void on_evaluate(trainhook::Event& e) override;
  void on_predict(trainhook::Event& e) override;
  void on_log(trainhook::Event& e) override;
  void on_train_end(trainhook::Event& e) override;

 private:
  trainhook::Host host_;
  Display display_;
  bool training_ = false;  // a training bar exists (world zero, between train begin and end)
  std::optional<double> loss_;
  std::optional<double> learning_rate_;
};

}  // namespace trainhook::progress
