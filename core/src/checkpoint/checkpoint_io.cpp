#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <trainhook/checkpoint/atomic_file.hpp>
#include <trainhook/checkpoint/checkpoint_manifest.hpp>

#include <trainhook/args/hf_training_args.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/checkpoint/hf_optimizer_file.hpp>
#include <trainhook/checkpoint/hf_rng_state_file.hpp>
#include <trainhook/checkpoint/hf_scheduler_file.hpp>
#include <trainhook/checkpoint/reproducibility.hpp>
#include <trainhook/checkpoint/safetensors_io.hpp>
#include <trainhook/checkpoint/serialize_archive_file.hpp>
#include <trainhook/checkpoint/torch_pickle_io.hpp>
#include <trainhook/common/checked_json.hpp>
#include <trainhook/models/own_weights_file.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <spdlog/spdlog.h>
#include <torch/serialize.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

void write_text(const fs::path& file, const std::string& text) {
  write_text_atomically(file, !text.empty() && text.back() != '\n' ? text + "\n" : text);
}

void require(const fs::path& file) {
  if (!fs::exists(file)) throw std::runtime_error(file.string() + ": missing from the checkpoint");
}

std::string shape_text(const torch::Tensor& t) {
  std::string out = "[";
  for (int64_t i = 0; i < t.dim(); ++i) out += (i != 0 ? ", " : "") + std::to_string(t.size(i));
  return out + "]";
}

// LibTorch's Module::load replaces a parameter of another shape silently
// (Tensor::set_), so a size-16 checkpoint loaded into a size-32 model trains
// the old size. Every parameter and buffer is compared first.
void compare_shapes(const torch::nn::Module& module, torch::serialize::InputArchive& archive,
                    const std::string& prefix, std::vector<std::string>& differences) {
  for (const auto& p : module.named_parameters(/*recurse=*/false)) {
    torch::Tensor saved;
    if (!archive.try_read(p.key(), saved))
      differences.push_back(prefix + p.key() + " is missing from the checkpoint");
    else if (saved.sizes() != p.value().sizes())
      differences.push_back(prefix + p.key() + " is " + shape_text(saved) + " in the checkpoint but " +
                            shape_text(p.value()) + " in the model asked for");
  }
  for (const auto& b : module.named_buffers(/*recurse=*/false)) {
    torch::Tensor saved;
    if (archive.try_read(b.key(), saved, /*is_buffer=*/true) && saved.sizes() != b.value().sizes())
      differences.push_back(prefix + b.key() + " is " + shape_text(saved) + " in the checkpoint but " +
                            shape_text(b.value()) + " in the model asked for");
  }
  for (const auto& child : module.named_children()) {
    torch::serialize::InputArchive sub;
    if (!archive.try_read(child.key(), sub)) {
      differences.push_back(prefix + child.key() + " is missing from the checkpoint");
      continue;
    }
    compare_shapes(*child.value(), sub, prefix + child.key() + ".", differences);
  }
}

}  // namespace

std::string rank_rng_state_file(int rank) { return "rng_state_" + std::to_string(rank) + ".pth"; }

torch::Tensor cpu_rng_state() {
  auto gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

void check_checkpoint_world_size(const fs::path& dir, int world_size) {
  int ranks = 0;
  while (fs::exists(dir / rank_rng_state_file(ranks))) ++ranks;
  const int written_by = ranks > 0 ? ranks : (fs::exists(dir / kRngStateFile) ? 1 : 0);
  if (written_by == 0 || written_by == world_size) return;  // no RNG state: load_rng_state names it
  throw std::runtime_error(
      "resume_from_checkpoint: " + dir.string() + " was written by a run of " + std::to_string(written_by) +
      " process(es) (" +
      (ranks > 0 ? "rng_state_0.pth.." + rank_rng_state_file(ranks - 1) : std::string(kRngStateFile)) +
      ") but this run has world_size " + std::to_string(world_size) +
      "; resume with the same number of processes");
}

void save_model_weights(torch::nn::Module& module, const fs::path& file) {
  // A model with a weights format of its own (TorchScript: the archive it came
  // in, torch.jit.load-able) writes it itself.
  if (auto* own = dynamic_cast<OwnWeightsFile*>(&module)) {
    own->save_weights(file);
    return;
  }
  torch::serialize::OutputArchive archive;
  module.save(archive);
  save_archive_atomically(archive, file);
}

void load_model_weights(torch::nn::Module& module, const fs::path& file) {
  require(file);
  verify_file_in_manifest(file);  // damaged weights: an error naming the file
  if (auto* own = dynamic_cast<OwnWeightsFile*>(&module)) {
    own->load_weights(file);
    return;
  }
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(file.string());
    std::vector<std::string> differences;
    compare_shapes(module, archive, "", differences);
    if (!differences.empty()) {
      std::string list;
      for (size_t i = 0; i < differences.size() && i < 4; ++i) list += (i != 0 ? "; " : "") + differences[i];
      if (differences.size() > 4) list += "; and " + std::to_string(differences.size() - 4) + " more";
      throw std::runtime_error(file.string() + ": the checkpoint's model differs from the one asked for (" +
                               list +
                               "); give the model arguments it was trained with (--model, --hidden_size, "
                               "--num_layers, ...), or train from scratch");
    }
    module.load(archive);
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": cannot load the model weights (" +
                             e.what_without_backtrace() + ")");
  }
}

bool load_best_model_or_keep(torch::nn::Module& module, const fs::path& checkpoint) {
  const fs::path file = checkpoint / kModelFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    spdlog::warn(
        "load_best_model_at_end: the best checkpoint {} is gone (moved or deleted); keeping the last weights "
        "of the run instead",
        checkpoint.string());
    return false;
  }
  load_model_weights(module, file);
  return true;
}

void write_checkpoint_files(const fs::path& dir, const CheckpointContents& c) {
  auto done = [&](const fs::path& f) {
    if (c.on_file) c.on_file(f);
  };
  save_model_weights(*c.module, dir / kModelFile);
  done(dir / kModelFile);
  if (c.save_safetensors) {
    save_safetensors(*c.module, dir / kSafetensorsFile);
    done(dir / kSafetensorsFile);
  }
  // torch.optim's layout (HF's Trainer loads it; it carries all LibTorch's
  // four optimizers keep); an optimizer without that layout keeps LibTorch's archive.
  if (has_hf_optimizer_layout(*c.optimizer)) {
    save_hf_optimizer(*c.optimizer, c.scheduler->base_lr(), c.next_lr.value_or(c.scheduler->lr()),
                      dir / kOptimizerFile);
  } else {
    torch::serialize::OutputArchive archive;
    c.optimizer->save(archive);
    save_archive_atomically(archive, dir / kOptimizerFile);
  }
  done(dir / kOptimizerFile);
  write_text(dir / kSchedulerFile, c.scheduler->state().dump(2));
  done(dir / kSchedulerFile);
  if (!c.scheduler->metric_driven()) {
    save_hf_scheduler(*c.scheduler, c.optimizer->param_groups().size(), dir / kHfSchedulerFile);
    done(dir / kHfSchedulerFile);
  }
  if (c.scaler && c.scaler->enabled()) {
    write_text(dir / kScalerFile, c.scaler->state().dump(2));
    done(dir / kScalerFile);
  }
  if (c.rank_rng_states.empty()) {
    save_rng_state(dir / kRngStateFile);
    done(dir / kRngStateFile);
    save_hf_rng_state(cpu_rng_state(), c.seed, dir / kHfRngStateFile);
    done(dir / kHfRngStateFile);
  } else {
    for (size_t r = 0; r < c.rank_rng_states.size(); ++r) {
      const fs::path f = dir / rank_rng_state_file(static_cast<int>(r));
      save_hf_rng_state(c.rank_rng_states[r], c.seed, f);  // load_rng_state reads both layouts
      done(f);
    }
  }
  write_training_args_files(dir, c.training_args_json);
  done(dir / kTrainingArgsFile);
  if (!c.model_config_json.empty()) {
    write_text(dir / kModelConfigFile, c.model_config_json + "\n");
    done(dir / kModelConfigFile);
  }
  // Last: its presence marks a complete checkpoint for resume and rotation.
  {
    // transformers 4.47 builds TrainerState(**json) and refuses keys it lacks:
    // best_global_step, a later field, is left out while it is unset (null).
    nlohmann::json state = to_json(*c.state);
    if (state.contains("best_global_step") && state["best_global_step"].is_null())
      state.erase("best_global_step");
    write_text(dir / kTrainerStateFile, state.dump(2, ' ', /*ensure_ascii=*/true));
  }
  done(dir / kTrainerStateFile);
  write_checkpoint_manifest(dir);  // checked on load
}

void write_training_args_files(const fs::path& dir, const std::string& training_args_json) {
  // A file that already holds the text is left alone (the train-begin write
  // repeats the last run's, and a failure there must not touch a good file).
  auto write_if_changed = [&](const fs::path& file, const std::string& text) {
    const std::string wanted = !text.empty() && text.back() != '\n' ? text + "\n" : text;
    std::ifstream in(file, std::ios::binary);
    const std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.is_open() || old != wanted) write_text_atomically(file, wanted);
  };
  const nlohmann::json all = nlohmann::json::parse(training_args_json, nullptr, /*allow_exceptions=*/false);
  if (!all.is_object()) {  // not to_json's object (an embedding test's text): kept as given
    write_if_changed(dir / kTrainingArgsFile, training_args_json);
    return;
  }
  const SplitTrainingArgs split = split_training_args(all);
  write_if_changed(dir / kTrainingArgsFile, split.hf.dump(2));
  write_if_changed(dir / kTrainhookArgsFile, split.trainhook.dump(2));
}

void load_checkpoint_weights(const fs::path& dir, torch::nn::Module& module,
                             torch::optim::Optimizer& optimizer, LrScheduler& scheduler, GradScaler* scaler) {
  verify_checkpoint_manifest(dir);  // every file, before any is used
  if (fs::exists(dir / kModelFile) || !fs::exists(dir / kSafetensorsFile)) {
    load_model_weights(module, dir / kModelFile);
  } else {
    load_safetensors(module, dir / kSafetensorsFile);  // HF's Trainer saves only these
  }
  const fs::path opt = dir / kOptimizerFile;
  require(opt);
  if (is_torchscript_archive(opt)) {  // written before optimizer.pt took torch.optim's layout
    try {
      torch::serialize::InputArchive archive;
      archive.load_from(opt.string());
      optimizer.load(archive);
    } catch (const c10::Error& e) {
      throw std::runtime_error(opt.string() + ": cannot load the optimizer state (" +
                               e.what_without_backtrace() + ")");
    }
  } else {
    load_hf_optimizer(optimizer, opt);
  }
  // scheduler.json and scaler.json go through the checked parser (depth limit,
  // duplicate keys; fuzzed as fuzz_json_config), which names the file.
  const fs::path sched = dir / kSchedulerFile;
  if (!fs::exists(sched) && fs::exists(dir / kHfSchedulerFile)) {
    load_hf_scheduler(scheduler, dir / kHfSchedulerFile);  // an HF checkpoint
  } else {
    require(sched);
    const nlohmann::json schedule = read_checked_json_file(sched.string());
    try {
      scheduler.load_state(schedule);
    } catch (const std::exception& e) {
      throw std::runtime_error(sched.string() + ": " + e.what());
    }
  }
  const fs::path scaler_file = dir / kScalerFile;
  if (!scaler || !scaler->enabled() || !fs::exists(scaler_file)) return;
  scaler->load_state(read_checked_json_file(scaler_file.string()), scaler_file.string());
}

}  // namespace trainhook
