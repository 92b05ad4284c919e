// The data-parallel seam over a c10d process group (DDP on the CPU): it owns
// the gradient averaging (a GradientReducer overlapping backward, or one
// all-reduce after it) and every collective the trainer needs.
#pragma once

#include <trainhook/distributed/data_parallel.hpp>
#include <trainhook/distributed/gradient_reducer.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace trainhook::distributed {

class MultiProcess final : public DataParallel {
 public:
  // Broadcasts rank 0's parameters and buffers of `module` to every rank (DDP's
  // start; a collective). `reduce_gradients` non-empty replaces the averaging.
  MultiProcess(std::shared_ptr<ProcessGroup> group, torch::nn::Module& module, GradientReduction reduction,
               std::function<void()> reduce_gradients = {});

  int rank() const noexcept override { return group_->rank(); }
  int world_size() const noexcept override { return group_->size(); }
  void before_backward(bool accumulation_boundary) override;
  void reduce_gradients() override;
  void agree_on_control(TrainerControl& control) override;
  double mean_over_ranks(double value) override;
  double sum_over_ranks(double value, const char* what) override;
  torch::Tensor gather_rows(const torch::Tensor& local, const char* what) override;
  std::vector<std::string> gather_strings(const std::string& local, const char* what) override;
  std::string rank0_value(const std::string& value, const char* what) override;
  std::vector<torch::Tensor> gather_rng_states() override;
  std::string rng_state_file() const override;
  void barrier(const char* what) override;
  ProcessGroup* process_group() noexcept override { return group_.get(); }

 private:
  std::shared_ptr<ProcessGroup> group_;
  std::vector<torch::Tensor> params_;
  // Set unless the caller's hook replaces the averaging.
  std::unique_ptr<GradientReducer> reducer_;
  std::function<void()> reduce_gradients_;
};

}  // namespace trainhook::distributed
