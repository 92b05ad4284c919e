// MultiProcess (see multi_process.hpp): the trainer's collectives over c10d.
#include <trainhook/distributed/multi_process.hpp>

#include <trainhook/callbacks/state.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <torch/torch.h>

#include <cstring>
#include <utility>

namespace trainhook::distributed {

MultiProcess::MultiProcess(std::shared_ptr<ProcessGroup> group, torch::nn::Module& module,
                           GradientReduction reduction, std::function<void()> reduce_gradients)
    : group_(std::move(group)), params_(module.parameters()), reduce_gradients_(std::move(reduce_gradients)) {
  // DDP's start: every rank holds rank 0's parameters and buffers, whatever its seed.
  std::vector<torch::Tensor> tensors = params_;
  for (const auto& b : module.buffers()) tensors.push_back(b);
  broadcast_from_rank0(*group_, tensors);
  // after_backward: the same buckets, all started once backward has ended.
  if (!reduce_gradients_) {
    reducer_ = std::make_unique<GradientReducer>(group_, params_, 25LL * 1024 * 1024,
                                                 reduction == GradientReduction::overlap_with_backward);
  }
}

void MultiProcess::before_backward(bool accumulation_boundary) {
  if (reducer_) reducer_->arm(accumulation_boundary);
}

void MultiProcess::reduce_gradients() {
  if (reduce_gradients_) {
    reduce_gradients_();
  } else {
    reducer_->finish();
  }
}

void MultiProcess::agree_on_control(TrainerControl& control) {
  auto flags = torch::tensor(
      {static_cast<int32_t>(control.should_training_stop), static_cast<int32_t>(control.should_epoch_stop),
       static_cast<int32_t>(control.should_save), static_cast<int32_t>(control.should_evaluate),
       static_cast<int32_t>(control.should_log)},
      torch::kInt);
  std::vector<torch::Tensor> t{flags};
  group_->all_reduce_max(t, "TrainerControl flags");
  const auto f = flags.accessor<int32_t, 1>();
  control.should_training_stop = f[0] != 0;
  control.should_epoch_stop = f[1] != 0;
  control.should_save = f[2] != 0;
  control.should_evaluate = f[3] != 0;
  control.should_log = f[4] != 0;
}

double MultiProcess::sum_over_ranks(double value, const char* what) {
  auto t = torch::tensor({value}, torch::kDouble);
  std::vector<torch::Tensor> one{t};
  group_->all_reduce_sum(one, what);
  return t.item<double>();
}

double MultiProcess::mean_over_ranks(double value) {
  return sum_over_ranks(value, "logged metrics") / static_cast<double>(group_->size());
}

torch::Tensor MultiProcess::gather_rows(const torch::Tensor& local, const char* what) {
  return group_->gather_rows(local, what);
}

std::vector<std::string> MultiProcess::gather_strings(const std::string& local, const char* what) {
  // The bytes packed into 64-bit integers (the collectives sum, and every
  // back end sums integers exactly), the lengths gathered first.
  const auto lengths = group_->gather_rows(torch::tensor({static_cast<int64_t>(local.size())}, torch::kLong), what);
  auto packed = torch::zeros({static_cast<int64_t>((local.size() + 7) / 8)}, torch::kLong);
  if (!local.empty()) std::memcpy(packed.data_ptr<int64_t>(), local.data(), local.size());
  const auto all = group_->gather_rows(packed, what).contiguous();
  const auto* bytes = reinterpret_cast<const char*>(all.data_ptr<int64_t>());
  std::vector<std::string> out;
  size_t at = 0;  // in bytes, each rank's part starting at a multiple of 8
  for (int64_t r = 0; r < lengths.size(0); ++r) {
    const auto n = static_cast<size_t>(lengths[r].item<int64_t>());
    out.emplace_back(bytes + at, n);
    at += (n + 7) / 8 * 8;
  }
  return out;
}

std::string MultiProcess::rank0_value(const std::string& value, const char* what) {
  // Two broadcasts: the length, then the bytes (ranks other than 0 do not know it).
  std::vector<torch::Tensor> size{torch::tensor({static_cast<int64_t>(value.size())}, torch::kLong)};
  group_->broadcast(size, 0, what);
  const int64_t n = size[0].item<int64_t>();
  if (n == 0) return {};
  auto bytes = torch::empty({n}, torch::kUInt8);
  if (group_->rank() == 0) std::memcpy(bytes.data_ptr<uint8_t>(), value.data(), value.size());
  std::vector<torch::Tensor> data{bytes};
  group_->broadcast(data, 0, what);
  return std::string(reinterpret_cast<const char*>(bytes.data_ptr<uint8_t>()), static_cast<size_t>(n));
}

std::vector<torch::Tensor> MultiProcess::gather_rng_states() {
  const auto all =
      group_->gather_rows(cpu_rng_state().reshape({1, -1}).contiguous(), "checkpoint RNG states");
  std::vector<torch::Tensor> states;
  for (int64_t r = 0; r < all.size(0); ++r) states.push_back(all[r].clone());
  return states;
}

std::string MultiProcess::rng_state_file() const { return rank_rng_state_file(group_->rank()); }

void MultiProcess::barrier(const char* what) { group_->barrier(what); }

}  // namespace trainhook::distributed
