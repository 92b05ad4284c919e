// scheduler.pt as HF's Trainer saves it: torch's LambdaLR.state_dict() (HF's
// schedules are LambdaLRs; the lambdas themselves are not saved):
//   {"base_lrs": [lr, ...], "last_epoch": step, "_step_count": step + 1,
//    "_last_lr": [rate now, ...], "lr_lambdas": [{}, ...], "verbose": False,
//    "_get_lr_called_within_step": False}
// reduce_lr_on_plateau (torch's ReduceLROnPlateau) is not written or read:
// its state stays in our scheduler.json.
#pragma once

#include <trainhook/optim/lr_schedule.hpp>

#include <cstddef>
#include <filesystem>

namespace trainhook {

inline constexpr const char* kHfSchedulerFile = "scheduler.pt";

// `groups`: the optimizer's parameter groups (one entry each in the lists).
void save_hf_scheduler(const LrScheduler& scheduler, size_t groups, const std::filesystem::path& file);

// Sets the schedule's step from last_epoch. Throws std::runtime_error naming
// the file: not a LambdaLR state (e.g. ReduceLROnPlateau's), a base rate
// other than this run's learning_rate, a refused pickle; or this run's
// schedule is reduce_lr_on_plateau.
void load_hf_scheduler(LrScheduler& scheduler, const std::filesystem::path& file);

}  // namespace trainhook
