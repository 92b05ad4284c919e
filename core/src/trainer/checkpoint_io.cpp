#include <trainhook/trainer/checkpoint_io.hpp>

#include <trainhook/trainer/checkpoint_dirs.hpp>
#include <trainhook/trainer/reproducibility.hpp>
#include <trainhook/callbacks/trainer_state_io.hpp>
#include <trainhook/models/torchscript_model.hpp>
#include <trainhook/trainer/safetensors_io.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize.h>

#include <fstream>
#include <mutex>
#include <stdexcept>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

void write_text(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text;
  if (!text.empty() && text.back() != '\n') out << '\n';
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

void require(const fs::path& file) {
  if (!fs::exists(file)) throw std::runtime_error(file.string() + ": missing from the checkpoint");
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
  // A TorchScript model is saved as the archive it came in (torch.jit.load-able).
  if (auto* script = dynamic_cast<ScriptModuleParameters*>(&module)) {
    script->owner().save(file);
    return;
  }
  torch::serialize::OutputArchive archive;
  module.save(archive);
  archive.save_to(file.string());
}

void load_model_weights(torch::nn::Module& module, const fs::path& file) {
  require(file);
  if (auto* script = dynamic_cast<ScriptModuleParameters*>(&module)) {
    script->owner().load_weights(file);
    return;
  }
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(file.string());
    module.load(archive);
  } catch (const c10::Error& e) {
    throw std::runtime_error(file.string() + ": cannot load the model weights (" +
                             e.what_without_backtrace() + ")");
  }
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
  {
    torch::serialize::OutputArchive archive;
    c.optimizer->save(archive);
    archive.save_to((dir / kOptimizerFile).string());
  }
  done(dir / kOptimizerFile);
  write_text(dir / kSchedulerFile, c.scheduler->state().dump(2));
  done(dir / kSchedulerFile);
  if (c.rank_rng_states.empty()) {
    save_rng_state(dir / kRngStateFile);
    done(dir / kRngStateFile);
  } else {
    for (size_t r = 0; r < c.rank_rng_states.size(); ++r) {
      const fs::path f = dir / rank_rng_state_file(static_cast<int>(r));
      torch::serialize::OutputArchive archive;
      archive.write("cpu_rng_state", c.rank_rng_states[r]);  // load_rng_state's layout
      archive.save_to(f.string());
      done(f);
    }
  }
  write_text(dir / kTrainingArgsFile, c.training_args_json);
  done(dir / kTrainingArgsFile);
  // Last: its presence marks a complete checkpoint for resume and rotation.
  save_trainer_state(*c.state, dir / kTrainerStateFile);
  done(dir / kTrainerStateFile);
}

void load_checkpoint_weights(const fs::path& dir, torch::nn::Module& module,
                             torch::optim::Optimizer& optimizer, LrScheduler& scheduler) {
  load_model_weights(module, dir / kModelFile);
  const fs::path opt = dir / kOptimizerFile;
  require(opt);
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(opt.string());
    optimizer.load(archive);
  } catch (const c10::Error& e) {
    throw std::runtime_error(opt.string() + ": cannot load the optimizer state (" +
                             e.what_without_backtrace() + ")");
  }
  const fs::path sched = dir / kSchedulerFile;
  require(sched);
  std::ifstream in(sched);
  nlohmann::json j;
  try {
    in >> j;
    scheduler.load_state(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(sched.string() + ": " + e.what());
  }
}

}  // namespace trainhook
