// Run ids and the WANDB_RESUME=auto bookkeeping.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace trainhook::wandb {

// 8 random characters [a-z0-9], like the W&B client's generated ids.
std::string new_run_id();

// WANDB_RESUME=auto: <dir>/wandb/wandb-resume.json holds the id of the last
// run that started here and did not finish; it is removed when a run ends.
std::optional<std::string> read_auto_resume_id(const std::filesystem::path& dir);
void write_auto_resume_id(const std::filesystem::path& dir, const std::string& run_id);
void clear_auto_resume_id(const std::filesystem::path& dir);

}  // namespace trainhook::wandb
