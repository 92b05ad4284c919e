// Where event files go and what they are called, as HF's TensorBoardCallback
// and torch's SummaryWriter name them.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <string>
#include <string_view>

namespace trainhook::tensorboard {

// "<Mon><DD>_<HH>-<MM>-<SS>_<host>" in local time with English month names
// (Python's "%b%d_%H-%M-%S" in the C locale), e.g. "Mar07_09-05-01_node1".
std::string run_folder_name(std::time_t now, std::string_view host);

// "events.out.tfevents.<10-digit unix time>.<host>.<pid>.<n>"; n tells apart
// files one process opens within the same second.
std::string event_file_name(std::time_t now, std::string_view host, int64_t pid, uint64_t n);

struct LogDirInputs {
  std::string configured;   // plugin_config tensorboard.logging_dir ("" = unset)
  std::string environment;  // TENSORBOARD_LOGGING_DIR ("" = unset)
  std::string output_dir;   // the run's output_dir
  std::string trial_name;   // hyperparameter-search trial ("" = none)
};

// The configured folder, else the environment's, else
// output_dir/runs/<run_folder_name>; a trial's events go into a subfolder
// named after the trial, as in HF.
std::filesystem::path resolve_log_dir(const LogDirInputs& in, std::time_t now, std::string_view host);

}  // namespace trainhook::tensorboard
