// The data-parallel seam: every point where a training run does something
// different with one process or many, behind one interface. The trainer calls
// each method at the same place whatever the world size, so its loop has no
// `if (group)`: SingleProcess (single_process.hpp) does nothing or hands its
// input back; MultiProcess (multi_process.hpp) does it over a c10d process
// group. make_data_parallel (make_data_parallel.hpp) picks one from the arguments.
//
// Every method of MultiProcess that communicates is a collective: all ranks
// call it in the same order (the trainer's loop guarantees that by agreeing on
// TrainerControl before it branches on a flag).
#pragma once

#include <trainhook/distributed/gradient_reduction.hpp>

#include <torch/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace trainhook {
struct TrainerControl;
}  // namespace trainhook

namespace trainhook::distributed {

class ProcessGroup;

class DataParallel {
 public:
  virtual ~DataParallel() = default;

  virtual int rank() const noexcept = 0;
  virtual int world_size() const noexcept = 0;

  // --- the step loop
  // Before loss.backward() of every micro-step: whether this backward ends an
  // accumulation window (the only one whose gradients are reduced).
  virtual void before_backward(bool accumulation_boundary) = 0;
  // On an accumulation boundary, after backward and before clipping: every
  // rank's .grad holds the average over ranks.
  virtual void reduce_gradients() = 0;
  // TrainerControl flags set on any rank hold on every rank (OR over ranks),
  // so all ranks log, evaluate, save and stop at the same step.
  virtual void agree_on_control(TrainerControl& control) = 0;
  // The mean of `value` over ranks (the logged training loss, as HF's).
  virtual double mean_over_ranks(double value) = 0;

  // --- evaluation
  virtual double sum_over_ranks(double value, const char* what) = 0;
  // Every rank's rows concatenated in rank order (ranks may hold different row counts).
  virtual torch::Tensor gather_rows(const torch::Tensor& local, const char* what) = 0;

  // Every rank's `local` text in rank order, on every rank (the profile's parts).
  virtual std::vector<std::string> gather_strings(const std::string& local, const char* what) = 0;

  // --- checkpoints
  // Rank 0's `value` on every rank. The checkpoint to resume from may be picked
  // by an integration (flyte's restore), and integrations live on rank 0 only:
  // every rank must resume the one rank 0 resumes.
  virtual std::string rank0_value(const std::string& value, const char* what) = 0;
  // Every rank's CPU RNG state in rank order, for the checkpoint rank 0 writes
  // (rng_state_<rank>.pth); empty with one process (the checkpoint writes rng_state.pt).
  virtual std::vector<torch::Tensor> gather_rng_states() = 0;
  // The file of a checkpoint that holds this process's RNG state.
  virtual std::string rng_state_file() const = 0;
  // No rank goes on before every rank has reached this point.
  virtual void barrier(const char* what) = 0;
  // The c10d group, for guards that need it (MainProcessFirst); nullptr with one process.
  virtual ProcessGroup* process_group() noexcept = 0;
};

}  // namespace trainhook::distributed
