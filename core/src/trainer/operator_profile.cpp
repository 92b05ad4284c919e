// --profile ops: LibTorch's operator-level profiler on the training thread.
// Debian's LibTorch 1.13 has no Kineto: its legacy profiler writes the Chrome
// trace (RecordProfile). The PyPI LibTorch 2.x has Kineto, which also runs on the CPU.
#include "run_profile.hpp"

#include <trainhook/checkpoint/atomic_file.hpp>

#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/autograd/profiler_kineto.h>
#else
#include <torch/csrc/autograd/profiler_legacy.h>

#include <optional>
#include <sstream>
#include <stdexcept>
#endif

namespace trainhook {
namespace {

#if TORCH_VERSION_MAJOR >= 2
class KinetoProfile final : public OperatorProfile {
 public:
  KinetoProfile() {
    namespace impl = torch::profiler::impl;
    const impl::ProfilerConfig config(impl::ProfilerState::KINETO, /*report_input_shapes=*/true);
    const std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
  }
  ~KinetoProfile() override {
    if (!saved_) (void)torch::autograd::profiler::disableProfiler();
  }
  std::string save(const std::string& file) override {
    saved_ = true;
    const auto result = torch::autograd::profiler::disableProfiler();
    // A temporary name renamed into place, as every file the trainer writes.
    write_file_atomically(file, [&](const std::filesystem::path& tmp) { result->save(tmp.string()); });
    return "LibTorch " TORCH_VERSION "'s Kineto profiler";
  }

 private:
  bool saved_ = false;
};
#else
class LegacyProfile final : public OperatorProfile {
 public:
  LegacyProfile() { record_.emplace(trace_); }
  std::string save(const std::string& file) override {
    record_.reset();  // stops the profiler and writes the trace into trace_
    write_text_atomically(file, trace_.str());
    return "LibTorch " TORCH_VERSION "'s legacy profiler (this build has no Kineto)";
  }

 private:
  std::ostringstream trace_;
  std::optional<torch::autograd::profiler::RecordProfile> record_;
};
#endif

}  // namespace

std::unique_ptr<OperatorProfile> OperatorProfile::start() {
#if TORCH_VERSION_MAJOR >= 2
  return std::make_unique<KinetoProfile>();
#else
  return std::make_unique<LegacyProfile>();
#endif
}

}  // namespace trainhook
