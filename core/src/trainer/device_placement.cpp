#include <trainhook/trainer/device_placement.hpp>

#include <trainhook/common/errors.hpp>
#include <trainhook/data/tensor_dataset.hpp>

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <string>

namespace trainhook {

c10::Device choose_device(const TrainingArguments& args) {
  if (args.bf16 && args.fp16)
    throw ArgumentError("--bf16 and --fp16: mixed precision takes one of them, not both");
  const bool cuda = !args.use_cpu && torch::cuda::is_available();
  if (args.fp16 && !cuda) {
    throw ArgumentError(
        std::string("--fp16 needs a CUDA GPU") +
        (args.use_cpu ? " and --use_cpu keeps training on the CPU" : " (this LibTorch or machine has none)") +
        "; on the CPU use --bf16");
  }
  if (!cuda) return c10::Device(c10::DeviceType::CPU);
  const int64_t index = args.local_rank < 0 ? 0 : args.local_rank;
  const int64_t count = static_cast<int64_t>(torch::cuda::device_count());
  if (index >= count) {
    throw ArgumentError("LOCAL_RANK " + std::to_string(index) + " picks cuda:" + std::to_string(index) +
                        ", but this machine has " + std::to_string(count) +
                        " GPU(s); start at most that many processes per machine, or give --use_cpu");
  }
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(index));
}

std::optional<c10::ScalarType> autocast_dtype(const TrainingArguments& args) {
  if (args.bf16) return c10::ScalarType::BFloat16;
  if (args.fp16) return c10::ScalarType::Half;
  return std::nullopt;
}

Batch to_device(const Batch& batch, const c10::Device& device) {
  if (device.is_cpu()) return batch;
  Batch out = batch;
  out.inputs = batch.inputs.to(device);
  if (batch.labels.defined()) out.labels = batch.labels.to(device);
  for (auto& extra : out.extra) extra.second = extra.second.to(device);
  return out;
}

// LibTorch 2.4 gave autocast one call per device type; 1.13 has one per type.
namespace {
#if TORCH_VERSION_MAJOR >= 2
bool autocast_enabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void set_autocast_enabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
c10::ScalarType autocast_dtype_of(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void set_autocast_dtype_of(c10::DeviceType d, c10::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
#else
bool autocast_enabled(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void set_autocast_enabled(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
c10::ScalarType autocast_dtype_of(c10::DeviceType d) {
  return d == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                    : at::autocast::get_autocast_cpu_dtype();
}
void set_autocast_dtype_of(c10::DeviceType d, c10::ScalarType t) {
  if (d == c10::DeviceType::CUDA) {
    at::autocast::set_autocast_gpu_dtype(t);
  } else {
    at::autocast::set_autocast_cpu_dtype(t);
  }
}
#endif
}  // namespace

AutocastScope::AutocastScope(c10::DeviceType device, std::optional<c10::ScalarType> dtype) : device_(device) {
  if (!dtype) return;
  active_ = true;
  was_enabled_ = autocast_enabled(device_);
  previous_dtype_ = autocast_dtype_of(device_);
  set_autocast_enabled(device_, true);
  set_autocast_dtype_of(device_, *dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set_autocast_enabled(device_, was_enabled_);
  set_autocast_dtype_of(device_, previous_dtype_);
}

}  // namespace trainhook
