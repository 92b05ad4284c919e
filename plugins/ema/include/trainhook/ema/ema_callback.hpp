// ema: keeps an exponential moving average of the model's parameters, updated
// at on_step_end from the parameter views (after the optimizer step), in each
// parameter's dtype (as torch's AveragedModel; states saved in doubles by
// earlier versions still load). With evaluate_with_ema the EMA weights are written into the model
// at on_evaluate_begin and the training weights back at on_evaluate (the ABI
// 1.1 write safe points). The EMA weights are this callback's saved state
// (bit for bit, base64), so they are in every checkpoint and restored on
// resume. With final_weights (default) the EMA weights are written into the
// model at on_train_end (the final-weights write point of abi.h), so the final
// save holds them; with --load_best_model_at_end the EMA weights saved with the
// best checkpoint. Every rank holds the same parameters, so every rank computes the same
// EMA (and swaps the same weights).
#pragma once

#include <trainhook/ema/ema_options.hpp>

#include <trainhook/plugin.hpp>
#include <trainhook/support/tensor_math.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trainhook::ema {

class EmaCallback final : public trainhook::Callback {
 public:
  explicit EmaCallback(trainhook::Setup& setup);
  EmaCallback(const trainhook::Host& host, const EmaOptions& options);

  void on_train_begin(trainhook::Event& e) override;
  void on_step_end(trainhook::Event& e) override;
  void on_evaluate_begin(trainhook::Event& e) override;
  void on_evaluate(trainhook::Event& e) override;
  // With final_weights, writes the EMA weights into the model. Logs the number
  // of updates and a checksum of the EMA weights (FNV-1a of their bytes); with
  // log_checksum as a warning, which every rank prints.
  void on_train_end(trainhook::Event& e) override;
  std::string save_state() override;
  void load_state(const std::string& state_json) override;

  int64_t num_updates() const noexcept { return updates_; }
  uint64_t checksum() const noexcept;
  const std::vector<support::TensorCopy>& weights() const noexcept { return shadow_; }

 private:
  void initialise();
  std::vector<support::TensorCopy> best_checkpoint_weights(const th_state& st) const;

  trainhook::Host host_;
  EmaOptions options_;
  std::vector<std::string> names_;
  std::vector<support::TensorCopy> shadow_;  // one per parameter, in the module's order
  std::vector<support::TensorCopy> backup_;  // training weights during an EMA evaluation
  int64_t updates_ = 0;
  int64_t steps_seen_ = 0;
};

}  // namespace trainhook::ema
