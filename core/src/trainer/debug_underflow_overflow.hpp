// --debug underflow_overflow (HF's DebugUnderflowOverflow, TrainingArguments.debug)
// for LibTorch models. HF hooks every module's forward and keeps the abs min/max
// of its weights, inputs and outputs; LibTorch C++ modules (built-in and
// TorchScript) have no forward hooks, so activations are out of reach. This
// detector instead looks, once per optimizer step (after the gradients are
// reduced, before clipping and the optimizer step), at the step's loss, every
// parameter and every gradient; it keeps their abs min/max for the last
// `max_frames` steps (HF's max_frames_to_save, 21) and, at the first inf/nan,
// prints those frames to stderr and throws UnderflowOverflowError naming the
// step and the tensor. Owned by the trainer (Trainer::Impl::underflow_overflow).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace trainhook {

struct TrainingArguments;

class UnderflowOverflowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class UnderflowOverflowDetector {
 public:
  static constexpr std::size_t kMaxFrames = 21;  // HF's max_frames_to_save

  // Checks step `step` (the step about to be taken, 1-based) when args.debug
  // has "underflow_overflow"; else returns at once. Throws at the first inf/nan.
  void check(const TrainingArguments& args, int64_t step, double loss, const torch::nn::Module& module);

  // The report of the kept frames (what is printed at the first inf/nan).
  std::string report() const;

 private:
  struct Frame {
    int64_t step = 0;
    double loss = 0;
    std::vector<double> weights;    // abs min, abs max per parameter
    std::vector<double> gradients;  // abs min, abs max per parameter (-1, -1: no gradient)
  };
  void record(int64_t step, double loss, const torch::nn::Module& module);

  int enabled_ = -1;  // -1: args not read yet
  std::vector<std::string> names_;
  std::deque<Frame> frames_;
};

}  // namespace trainhook
