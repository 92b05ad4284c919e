// make_data_parallel (see make_data_parallel.hpp): one process, or a group given by
// the caller, or one joined from the launcher's environment as HF does.
#include <trainhook/distributed/make_data_parallel.hpp>

#include <trainhook/args/training_arguments.hpp>
#include <trainhook/distributed/launch_env.hpp>
#include <trainhook/distributed/multi_process.hpp>
#include <trainhook/distributed/single_process.hpp>

#include <chrono>
#include <stdexcept>
#include <utility>

namespace trainhook::distributed {
namespace {

std::shared_ptr<ProcessGroup> join_from_environment(const TrainingArguments& args) {
  const auto env = read_launch_env();
  if (env.world_size != args.world_size || env.rank != args.process_index) {
    throw std::invalid_argument("world_size " + std::to_string(args.world_size) + " / process_index " +
                                std::to_string(args.process_index) +
                                " need a launcher (torchrun, srun or trainhook launch) that sets "
                                "RANK and WORLD_SIZE to match; the environment has RANK=" +
                                std::to_string(env.rank) + " WORLD_SIZE=" + std::to_string(env.world_size));
  }
  return ProcessGroup::create(env, args.ddp_backend.value_or(DdpBackend::gloo),
                              std::chrono::seconds(args.ddp_timeout));
}

}  // namespace

std::unique_ptr<DataParallel> make_data_parallel(TrainingArguments& args, torch::nn::Module& module,
                                                 DataParallelOptions options) {
  auto group = std::move(options.process_group);
  if (!group && args.world_size > 1) group = join_from_environment(args);
  if (!group) return std::make_unique<SingleProcess>(std::move(options.reduce_gradients));
  args.process_index = group->rank();
  args.world_size = group->size();
  if (args.local_rank < 0) args.local_rank = group->rank();
  return std::make_unique<MultiProcess>(std::move(group), module, options.gradient_reduction,
                                        std::move(options.reduce_gradients));
}

}  // namespace trainhook::distributed
