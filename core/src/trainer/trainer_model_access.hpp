// The trainer's ModelAccess (ABI 1.1): DLPack views of the model's parameters,
// gradients and buffers, the learning rate and its factor, metrics from
// plugins, skipping an optimizer step, and this step's values. Private to the
// library; one per Trainer::Impl, of which it reads the model, optimizer,
// scheduler and running event (Sources), never the Trainer itself.
//
// The training loop tells it about the step (add_micro_loss, end_window,
// take_skip) and asks it for the learning rate to set (lr()); Impl::fire adds
// the step values to the events that carry them (payload()); Impl::log merges
// the plugins' metrics (merge_metrics).
#pragma once

#include <trainhook/callbacks/callback.hpp>
#include <trainhook/callbacks/callback_handler.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/optim/lr_schedule.hpp>
#include <trainhook/plugin_host/host/model_access.hpp>
#include <trainhook/trainer/metrics.hpp>

#include <torch/optim/optimizer.h>
#include <torch/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

// The trainer's internal callback that keeps the ABI 1.1 learning-rate factor in checkpoints.
inline constexpr const char* kLrFactorCallbackName = "TrainhookLrFactor";

class TrainerModelAccess final : public ModelAccess {
 public:
  // `impl` owns this object and outlives it.
  // What it reads of the trainer: Trainer::Impl's members, which outlive it.
  struct Sources {
    const CallbackHandler& handler;  // the running event
    const std::shared_ptr<Model>& model;
    const std::unique_ptr<torch::optim::Optimizer>& optimizer;  // set by train()
    const std::optional<LrScheduler>& scheduler;
  };
  explicit TrainerModelAccess(Sources sources) : trainer_(sources) {}

  std::string tensors(int32_t kind, int32_t access, th_tensor_list& out) override;
  std::string learning_rates(double* out, uint32_t capacity, uint32_t& count) override;
  std::string set_lr_factor(double factor) override;
  double lr_factor() const override { return factor_; }
  std::string add_metric(const std::string& name, double value) override;
  std::string skip_optimizer_step() override;

  // ---- the trainer's side ----
  // The learning rate to set: the scheduler's value times the factor.
  double lr() const;
  // Every micro-batch's loss (already divided by gradient_accumulation_steps).
  void add_micro_loss(double loss);
  // The loss of the current accumulation window so far (its step's loss at its end).
  double window_loss() const noexcept { return window_loss_; }
  // After the gradients are reduced and clipped: closes the window's step values.
  void end_window(std::optional<double> grad_norm_before_clipping);
  // True once after a callback asked to skip this step's optimizer update.
  bool take_skip() noexcept;
  // `payload` plus this step's values for the events that carry them.
  EventPayload payload(EventId event, const EventPayload& payload) const;
  // Adds the metrics plugins added since the last log record, and forgets them.
  void merge_metrics(Metrics& logs);
  // Keeps the factor in checkpoints (stateful_callbacks["TrainhookLrFactor"]).
  // Added as CallbackHandler::Listing::internal: not in Trainer::callback_names().
  std::unique_ptr<detail::InternalCallback> state_callback();

 private:
  struct Views {
    std::vector<std::string> names;
    std::vector<const char*> name_ptrs;
    std::vector<torch::Tensor> tensors;
    std::vector<DLTensor> dl;
  };
  Views& views(int32_t kind);

  Sources trainer_;
  double factor_ = 1.0;
  std::map<std::string, double> pending_;
  bool skip_ = false;
  double window_loss_ = 0;
  bool window_closed_ = false;
  th_step_values step_{};
  std::optional<Views> params_, grads_, buffers_;
};

}  // namespace trainhook
