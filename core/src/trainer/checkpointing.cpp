// The Trainer's files: checkpoints (and the best metric that names the best
// one), which checkpoint to resume from, training_args.json, the model weights
// and trainer_state.json. The file formats are in checkpoint_io.cpp, the
// folder names and rotation in checkpoint_dirs.cpp.
#include "trainer_impl.hpp"

#include <trainhook/args/arguments_json.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/checkpoint/atomic_file.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/checkpoint/checkpoint_io.hpp>
#include <trainhook/checkpoint/resume_compatibility.hpp>
#include <trainhook/checkpoint/safetensors_io.hpp>
#include <trainhook/distributed/main_process_first.hpp>

#include <spdlog/spdlog.h>

#include <fstream>
#include <iterator>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

bool truthy(const std::string& s) { return s == "true" || s == "True" || s == "TRUE" || s == "1"; }

}  // namespace

bool Trainer::Impl::update_best_metric(const Metrics& metrics) {
  if (!args.metric_for_best_model) return false;
  std::string name = *args.metric_for_best_model;
  if (name.rfind("eval_", 0) != 0) name = "eval_" + name;
  const auto it = metrics.find(name);
  if (it == metrics.end()) {
    std::string have;
    for (const auto& [k, v] : metrics) have += (have.empty() ? "" : ", ") + k;
    throw std::runtime_error("metric_for_best_model: the evaluation has no metric '" + name +
                             "' (it has: " + have + "); set --metric_for_best_model to one of them");
  }
  const bool greater =
      args.greater_is_better.value_or(name.size() < 4 || name.compare(name.size() - 4, 4, "loss") != 0);
  const double value = it->second;
  const bool better =
      !state.best_metric || (greater ? value > *state.best_metric : value < *state.best_metric);
  if (better) {
    state.best_metric = value;
    state.best_global_step = state.global_step;
  }
  return better;
}

void Trainer::Impl::save_checkpoint() {
  const ProfileScope timed(profile.get(), profile.actions().save_checkpoint);
  const fs::path out(args.output_dir);
  const fs::path folder = checkpoint_dir(out, state.global_step);
  // The best checkpoint is the one saved at the step of the best evaluation.
  if (state.best_global_step && (*state.best_global_step == state.global_step ||
                                 fs::exists(checkpoint_dir(out, *state.best_global_step)))) {
    state.best_model_checkpoint = checkpoint_dir(out, *state.best_global_step).string();
  }
  handler.save_states(state, control);
  // Every rank's RNG state goes into the checkpoint rank 0 writes
  // (rng_state_<rank>.pth, as HF names them in a multi-process run).
  const std::vector<torch::Tensor> rank_rng = data_parallel->gather_rng_states();
  // Rank 0 writes; no rank goes on (and may load it, or exit) before the
  // checkpoint is complete, and a failed write ends every rank with a message.
  auto rank0_first = std::make_unique<distributed::MainProcessFirst>(
      data_parallel->process_group(),
      distributed::MainProcessFirstOptions().set_local(false).set_desc("checkpoint written by rank 0"));
  if (world_zero()) {
    fs::create_directories(out);
    CheckpointContents contents;
    contents.module = &model->module();
    contents.optimizer = optimizer.get();
    contents.scheduler = &*scheduler;
    contents.scaler = &scaler;
    contents.state = &state;
    contents.training_args_json = args_json;
    contents.model_config_json = model_config_json;
    contents.save_safetensors = args.save_safetensors;
    contents.on_file = on_checkpoint_file;
    contents.rank_rng_states = rank_rng;
    contents.seed = args.seed;
    contents.next_lr = access.lr();
    {
      const ProfileScope written(profile.get(), profile.actions().write_checkpoint);
      write_checkpoint_atomically(out, state.global_step,
                                  [&](const fs::path& tmp) { write_checkpoint_files(tmp, contents); });
    }
    if (args.save_total_limit) {
      const ProfileScope rotated(profile.get(), profile.actions().rotate_checkpoints);
      rotate_checkpoints(out, *args.save_total_limit, state.best_model_checkpoint);
    }
  }
  rank0_first.reset();
  const std::string dir = folder.string();
  EventPayload payload;
  payload.checkpoint_dir = dir.c_str();
  fire(TH_EVENT_SAVE, payload);
}

std::optional<fs::path> Trainer::Impl::resolve_resume(std::optional<std::string> resume) {
  // A checkpoint picked by a plugin (flyte's restore, an integration: rank 0
  // only) holds on every rank; a collective, so it runs whatever this rank chose.
  std::optional<std::string> picked = services->take_resume_checkpoint();
  const std::string rank0_pick = data_parallel->rank0_value(picked.value_or(""), "the resume checkpoint");
  if (data_parallel->rank() != 0) {
    if (picked && *picked != rank0_pick)
      spdlog::warn(
          "a plugin picked {} to resume from on this rank; rank 0 picked {}, and every rank follows rank 0",
          *picked, rank0_pick.empty() ? std::string("none") : rank0_pick);
    picked = rank0_pick.empty() ? std::nullopt : std::optional<std::string>(rank0_pick);
    if (picked && !fs::is_directory(*picked))
      throw std::runtime_error(
          "rank " + std::to_string(data_parallel->rank()) + ": rank 0 resumes from '" + *picked +
          "' (picked by a plugin such as flyte's restore), which is not a folder on this "
          "rank's machine; give every rank an output_dir on a shared disk");
  }
  if (!resume) resume = std::move(picked);
  if (!resume) resume = args.resume_from_checkpoint;
  if (!resume || resume->empty() || *resume == "false" || *resume == "False") return std::nullopt;
  if (truthy(*resume)) {
    auto latest = latest_checkpoint(args.output_dir);
    if (!latest) {
      throw std::runtime_error(
          "resume_from_checkpoint=true: no complete checkpoint-<step> folder in output_dir '" +
          args.output_dir + "'");
    }
    // Another run's checkpoint?
    check_resume_compatibility(*latest, to_json(args), /*found_automatically=*/true);
    return latest;
  }
  const fs::path dir(*resume);
  if (!fs::is_directory(dir))
    throw std::runtime_error("resume_from_checkpoint: '" + *resume + "' is not a folder");
  if (!fs::exists(dir / kTrainerStateFile)) {
    throw std::runtime_error("resume_from_checkpoint: '" + *resume + "' has no " + kTrainerStateFile +
                             " (not a complete checkpoint)");
  }
  for (const auto& d : check_resume_compatibility(dir, to_json(args), /*found_automatically=*/false))
    spdlog::warn("resuming {} with other arguments than it was saved with: {}", dir.string(), d);
  return dir;
}

// At train begin the arguments go to output_dir as every other file does (temp +
// rename), and only when they changed. A failure here is a warning, not the end
// of the run: the earlier file stays whole, the file is informational until the
// final save writes it again, and a full disk is then reported where it stops
// the run (the checkpoint or the final model), naming that file.
void Trainer::Impl::write_training_args() const {
  if (!world_zero()) return;
  fs::create_directories(args.output_dir);
  const fs::path file = fs::path(args.output_dir) / kTrainingArgsFile;
  try {
    write_training_args_files(args.output_dir, args_json);
  } catch (const std::exception& e) {
    spdlog::warn(
        "could not update {} at train begin ({}); the earlier file is unchanged and the final save "
        "writes it again",
        file.string(), e.what());
  }
}

void Trainer::save_model(const std::optional<fs::path>& dir) {
  if (!impl_->world_zero()) return;
  const fs::path target = dir.value_or(fs::path(impl_->args.output_dir));
  fs::create_directories(target);
  save_model_weights(impl_->model->module(), target / kModelFile);  // atomic
  if (impl_->args.save_safetensors) save_safetensors(impl_->model->module(), target / kSafetensorsFile);
  write_training_args_files(target, impl_->args_json);
  if (!impl_->model_config_json.empty())
    write_text_atomically(target / kModelConfigFile, impl_->model_config_json + "\n");
}

void Trainer::load_model(const fs::path& path) {
  const bool folder = fs::is_directory(path);
  // The config.json beside the weights (a checkpoint or a final save).
  check_model_config(folder ? path : path.parent_path(), impl_->model_config_json);
  load_model_weights(impl_->model->module(), folder ? path / kModelFile : path);
}

void Trainer::save_state() const {
  if (!impl_->world_zero()) return;
  fs::create_directories(impl_->args.output_dir);
  save_trainer_state(impl_->state, fs::path(impl_->args.output_dir) / kTrainerStateFile);
}

}  // namespace trainhook
