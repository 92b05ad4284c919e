// What a checkpoint folder holds and how each part is written and read:
//   model.pt            model weights (torch::serialize archive; a TorchScript
//                       model's own archive, torch.jit.load-able)
//   model.safetensors   the weights by state-dict name (save_safetensors)
//   optimizer.pt        optimizer state as torch.optim's state_dict() through
//                       torch.save (hf_optimizer_file.hpp), which HF's Trainer
//                       loads; before, a torch::serialize archive (still read)
//   scheduler.json      LR scheduler step (ours; with the plateau's state)
//   scheduler.pt        the same step as HF's LambdaLR state (hf_scheduler_file.hpp)
//   rng_state.pt        default CPU generator state (one process; ours)
//   rng_state.pth       the same as HF writes it (hf_rng_state_file.hpp)
//   rng_state_<r>.pth   rank r's generator state (several processes, HF's names
//                       and layout; before, torch::serialize archives, still read)
//   trainer_state.json  TrainerState (HF layout)
//   training_args.json  the arguments HF's TrainingArguments has (hf_training_args.hpp)
//   trainhook_args.json the rest of the arguments
// The folder is created atomically by write_checkpoint_atomically().
//
// load_checkpoint_weights also resumes a checkpoint HF's Trainer wrote
// (model.safetensors, optimizer.pt, scheduler.pt, rng_state*.pth): see
// docs/hf_compatibility.md.
#pragma once

#include <trainhook/callbacks/state.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/checkpoint/serialize_archive_file.hpp>
#include <trainhook/models/model.hpp>
#include <trainhook/optim/grad_scaler.hpp>
#include <trainhook/optim/lr_schedule.hpp>

#include <torch/optim/optimizer.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace trainhook {

inline constexpr const char* kModelFile = "model.pt";
inline constexpr const char* kOptimizerFile = "optimizer.pt";
inline constexpr const char* kSchedulerFile = "scheduler.json";
// --fp16 runs only: the loss scaler (accelerate names its copy scaler.pt).
inline constexpr const char* kScalerFile = "scaler.json";
// "rng_state_<rank>.pth": rank's RNG state in a multi-process checkpoint.
std::string rank_rng_state_file(int rank);
// The default CPU generator's state as a byte tensor (what rng_state files hold).
torch::Tensor cpu_rng_state();
// Resuming `dir` with `world_size` processes: throws std::runtime_error when
// the checkpoint was written by a different number of processes.
void check_checkpoint_world_size(const std::filesystem::path& dir, int world_size);

void save_model_weights(torch::nn::Module& module, const std::filesystem::path& file);
// Throws std::runtime_error naming the file (missing, or weights that do not fit the model).
void load_model_weights(torch::nn::Module& module, const std::filesystem::path& file);
// --load_best_model_at_end: the best checkpoint's weights; when that folder
// has gone (moved, deleted), a warning and false: the run keeps its last
// weights rather than losing everything at the end.
bool load_best_model_or_keep(torch::nn::Module& module, const std::filesystem::path& checkpoint);

struct CheckpointContents {
  torch::nn::Module* module = nullptr;
  torch::optim::Optimizer* optimizer = nullptr;
  const LrScheduler* scheduler = nullptr;
  const GradScaler* scaler = nullptr;  // written as scaler.json when enabled
  const TrainerState* state = nullptr;
  std::string training_args_json;
  std::string model_config_json;  // config.json when not empty
  bool save_safetensors = true;   // also write model.safetensors
  // Several processes: every rank's RNG state, written as rng_state_<r>.pth
  // instead of rng_state.pt.
  std::vector<torch::Tensor> rank_rng_states;
  // HF's set_seed: the Python and NumPy generator states of the rng files.
  int64_t seed = 42;
  // The next step's learning rate (optimizer.pt's "lr"); unset: the schedule's.
  std::optional<double> next_lr;
  // Called after each file is written (fault injection in tests).
  std::function<void(const std::filesystem::path&)> on_file;
};

// Writes every part into `dir` (an existing, empty folder).
void write_checkpoint_files(const std::filesystem::path& dir, const CheckpointContents& contents);

// training_args.json (HF's fields) and trainhook_args.json (the rest) from
// to_json(TrainingArguments) text, each written atomically into `dir`.
void write_training_args_files(const std::filesystem::path& dir, const std::string& training_args_json);

// Restores model, optimizer and scheduler from `dir`, ours or HF's Trainer's
// (model.safetensors when there is no model.pt, scheduler.pt when there is no
// scheduler.json); RNG and trainer state are restored by the trainer at the
// points HF restores them. Throws
// std::runtime_error naming the missing or bad file.
// An enabled `scaler` takes scaler.json's state; a checkpoint without one (saved
// without --fp16) leaves it at its initial scale.
void load_checkpoint_weights(const std::filesystem::path& dir, torch::nn::Module& module,
                             torch::optim::Optimizer& optimizer, LrScheduler& scheduler,
                             GradScaler* scaler = nullptr);

}  // namespace trainhook
