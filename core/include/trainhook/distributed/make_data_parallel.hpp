// make_data_parallel: the DataParallel (data_parallel.hpp) of a run, one
// process (single_process.hpp) or many (multi_process.hpp), from its arguments.
#pragma once

#include <trainhook/distributed/data_parallel.hpp>
#include <trainhook/distributed/gradient_reduction.hpp>

#include <functional>
#include <memory>

namespace torch::nn {
class Module;
}
namespace trainhook {
struct TrainingArguments;
}  // namespace trainhook

namespace trainhook::distributed {

class ProcessGroup;

struct DataParallelOptions {
  // A group made by the caller; empty with args.world_size > 1: one is joined
  // from the launcher's environment (launch_env.hpp).
  std::shared_ptr<ProcessGroup> process_group;
  GradientReduction gradient_reduction = GradientReduction::overlap_with_backward;
  // Replaces the built-in gradient averaging (called by reduce_gradients(),
  // with one process too). Empty: MultiProcess averages, SingleProcess does nothing.
  std::function<void()> reduce_gradients;
};

// SingleProcess for a world of one; else MultiProcess over options.process_group
// or a group joined from the environment (the environment must match
// args.world_size/process_index: an error names both otherwise). Sets
// args.process_index, world_size and local_rank from the group, and gives every
// rank rank 0's parameters and buffers of `module` (DDP's start).
std::unique_ptr<DataParallel> make_data_parallel(TrainingArguments& args, torch::nn::Module& module,
                                                 DataParallelOptions options);

}  // namespace trainhook::distributed
