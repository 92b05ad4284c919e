// The data-parallel seam for a world of one: nothing to agree on or reduce.
// The only thing it may run is a caller's gradient hook
// (TrainerOptions::reduce_gradients), which is called with one process too.
#pragma once

#include <trainhook/distributed/data_parallel.hpp>

#include <functional>
#include <string>
#include <vector>

namespace trainhook::distributed {

class SingleProcess final : public DataParallel {
 public:
  explicit SingleProcess(std::function<void()> reduce_gradients = {});

  int rank() const noexcept override { return 0; }
  int world_size() const noexcept override { return 1; }
  void before_backward(bool) override {}
  void reduce_gradients() override;
  void agree_on_control(TrainerControl&) override {}
  double mean_over_ranks(double value) override { return value; }
  double sum_over_ranks(double value, const char*) override { return value; }
  torch::Tensor gather_rows(const torch::Tensor& local, const char*) override { return local; }
  std::vector<std::string> gather_strings(const std::string& local, const char*) override { return {local}; }
  std::string rank0_value(const std::string& value, const char*) override { return value; }
  std::vector<torch::Tensor> gather_rng_states() override { return {}; }
  std::string rng_state_file() const override;
  void barrier(const char*) override {}
  ProcessGroup* process_group() noexcept override { return nullptr; }

 private:
  std::function<void()> reduce_gradients_;
};

}  // namespace trainhook::distributed
