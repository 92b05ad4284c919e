// checkpoint-<step> folders in output_dir: atomic creation, ordering, rotation
// (HF's _sorted_checkpoints/_rotate_checkpoints) and finding the latest for
// resume_from_checkpoint=true. What goes inside a checkpoint is the trainer's
// business (checkpoint/checkpoint_io.hpp). No LibTorch here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trainhook {

inline constexpr const char* kCheckpointPrefix = "checkpoint-";
inline constexpr const char* kTrainerStateFile = "trainer_state.json";
inline constexpr const char* kTrainingArgsFile = "training_args.json";
inline constexpr const char* kModelConfigFile = "config.json";  // TrainerOptions::model_config_json

std::filesystem::path checkpoint_dir(const std::filesystem::path& output_dir, int64_t step);

// Writes a checkpoint atomically: `write` fills a fresh temporary folder
// (output_dir/tmp-checkpoint-<step>), which is then renamed to
// checkpoint-<step> (replacing an older folder of that name). If `write` throws,
// the temporary folder is removed and the exception propagates; no
// checkpoint-<step> folder is created or changed. Returns the final folder.
std::filesystem::path write_checkpoint_atomically(
    const std::filesystem::path& output_dir, int64_t step,
    const std::function<void(const std::filesystem::path& tmp_dir)>& write);

// Complete checkpoints (folders checkpoint-<N> holding trainer_state.json),
// oldest first; the best checkpoint, if among them, is moved to the
// second-to-last place so rotation never deletes it (HF's ordering).
std::vector<std::filesystem::path> sorted_checkpoints(
    const std::filesystem::path& output_dir,
    const std::optional<std::string>& best_model_checkpoint = std::nullopt);

// Deletes the oldest checkpoints beyond `limit`, never the best one (with
// limit 1 and a best that is not the newest, two are kept). Returns the deleted.
std::vector<std::filesystem::path> rotate_checkpoints(
    const std::filesystem::path& output_dir, int64_t limit,
    const std::optional<std::string>& best_model_checkpoint);

// The checkpoint with the highest step, nullopt when none is complete.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& output_dir);

}  // namespace trainhook
