// MainProcessFirst: one sum all-reduce of a failure flag, which every rank
// joins exactly once: the main processes after their block (the flag says
// whether it threw), the others before theirs (so they wait for the mains).
// HF uses a barrier, which cannot say that a main process failed; a barrier
// left by an exception leaves the others waiting until the timeout.
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/distributed/main_process_first.hpp>
#include <trainhook/distributed/process_group.hpp>

#include <spdlog/spdlog.h>

#include <exception>
#include <stdexcept>
#include <vector>

namespace trainhook::distributed {
namespace {

constexpr const char* kWhat = "main_process_first";

// The number of main processes that reported a failure.
double failures_reported(ProcessGroup& group, bool failed) {
  std::vector<torch::Tensor> flag{torch::tensor({failed ? 1.0 : 0.0}, torch::kDouble)};
  group.all_reduce_sum(flag, kWhat);
  return flag[0].item<double>();
}

}  // namespace

MainProcessFirst::MainProcessFirst(ProcessGroup* group, MainProcessFirstOptions options)
    : options_(std::move(options)), uncaught_(std::uncaught_exceptions()) {
  if (group == nullptr || group->size() <= 1) return;
  group_ = group;
  if (options_.local) {
    const int32_t local_rank = options_.local_rank >= 0 ? options_.local_rank : read_launch_env().local_rank;
    main_ = local_rank == 0;
  } else {
    main_ = group_->rank() == 0;
  }
  if (main_) return;
  if (failures_reported(*group_, false) > 0) {
    throw std::runtime_error(std::string("main_process_first(") + options_.desc + "): the main process (" +
                             (options_.local ? "local rank 0" : "rank 0") +
                             ") failed in its block, so rank " + std::to_string(group_->rank()) +
                             " does not run it; see the main process's error");
  }
}

MainProcessFirst::~MainProcessFirst() noexcept(false) {
  if (group_ == nullptr || !main_) return;
  const bool failing = std::uncaught_exceptions() > uncaught_;
  if (!failing) {
    failures_reported(*group_, false);
    return;
  }
  // Unwinding: tell the others, and let the block's own exception go on.
  try {
    failures_reported(*group_, true);
  } catch (const std::exception& e) {
    spdlog::error("main_process_first({}): could not tell the other processes that the block failed: {}",
                  options_.desc, e.what());
  }
}

}  // namespace trainhook::distributed
