// Where training runs and in what precision (HF's --use_cpu, --bf16, --fp16):
// the device that holds the model, its optimizer state and every batch, and the
// autocast a forward and its loss run under. The Trainer owns both; nothing
// else in the core asks which device it is on.
#pragma once

#include <trainhook/args/training_arguments.hpp>

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <optional>

namespace trainhook {

struct Batch;

// CUDA when LibTorch has it, a GPU is present and --use_cpu is not given
// (cuda:LOCAL_RANK under a launcher, cuda:0 otherwise), else the CPU. Throws
// ArgumentError naming the flag for what this machine cannot do: --fp16 without
// a CUDA GPU, --bf16 with --fp16, a LOCAL_RANK without a GPU of that index.
// (--fp16 on CUDA trains with the Trainer's GradScaler.)
c10::Device choose_device(const TrainingArguments& args);

// The autocast dtype of --bf16 (bfloat16) or --fp16 (float16); none for float32.
std::optional<c10::ScalarType> autocast_dtype(const TrainingArguments& args);

// The batch's tensors on `device` (the same batch, not copied, on the CPU).
Batch to_device(const Batch& batch, const c10::Device& device);

// For one scope (a forward and its loss): autocast to `dtype` on the device's
// type, as HF's autocast_smart_context_manager. Restores what was set before
// and, leaving the outermost scope, drops autocast's cache of cast weights
// (they change at every optimizer step). Does nothing without a dtype.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, std::optional<c10::ScalarType> dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool active_ = false;
  bool was_enabled_ = false;
  c10::ScalarType previous_dtype_ = c10::ScalarType::Undefined;
};

}  // namespace trainhook
