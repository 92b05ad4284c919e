// reduce_lr_on_plateau: at each on_evaluate, feeds the watched metric to a
// trainhook::Plateau; when it decides to reduce, sets the trainer's learning-rate
// factor (ABI 1.1 set_lr_factor) so the scheduler's value is multiplied by it
// from then on. The Plateau state (best, counters) is this callback's saved
// state; the factor itself is kept in the checkpoint by the trainer.
#pragma once

#include <trainhook/reduce_lr_on_plateau/reduce_lr_on_plateau_options.hpp>

#include <trainhook/plateau.hpp>
#include <trainhook/plugin.hpp>

#include <string>

namespace trainhook::reduce_lr_on_plateau {

class ReduceLrOnPlateauCallback final : public trainhook::Callback {
 public:
  explicit ReduceLrOnPlateauCallback(trainhook::Setup& setup);
  ReduceLrOnPlateauCallback(const trainhook::Host& host, const ReduceLrOnPlateauOptions& options);

  void on_evaluate(trainhook::Event& e) override;
  std::string save_state() override;
  void load_state(const std::string& state_json) override;

  const Plateau& plateau() const noexcept { return plateau_; }

 private:
  trainhook::Host host_;
  std::string metric_;  // with the eval_ prefix
  Plateau plateau_;
  bool warned_missing_ = false;
};

}  // namespace trainhook::reduce_lr_on_plateau
