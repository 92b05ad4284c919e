#include <trainhook/checkpoint/resume_compatibility.hpp>

#include <trainhook/args/hf_training_args.hpp>
#include <trainhook/checkpoint/checkpoint_dirs.hpp>
#include <trainhook/common/checked_json.hpp>
#include <trainhook/strings.hpp>

#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace trainhook {
namespace {

// The arguments that decide what a run computes. Output, logging, plugins and
// launcher settings may change between a run and its resume.
constexpr const char* kRunKeys[] = {"max_steps",
                                    "num_train_epochs",
                                    "seed",
                                    "data_seed",
                                    "per_device_train_batch_size",
                                    "gradient_accumulation_steps",
                                    "learning_rate",
                                    "weight_decay",
                                    "adam_beta1",
                                    "adam_beta2",
                                    "adam_epsilon",
                                    "max_grad_norm",
                                    "optim",
                                    "lr_scheduler_type",
                                    "warmup_ratio",
                                    "warmup_steps",
                                    "full_determinism",
                                    "dataloader_drop_last"};

std::string shown(const nlohmann::json& v) { return v.is_null() ? "unset" : v.dump(); }

nlohmann::json read_json_object(const fs::path& file, const char* what) {
  // A JsonInputError (a std::runtime_error) already names the file.
  const nlohmann::json saved = read_checked_json_file(file.string());
  if (!saved.is_object()) throw std::runtime_error(file.string() + ": expected a JSON object of " + what);
  return saved;
}

bool same_value(const nlohmann::json& a, const nlohmann::json& b) {
  // 3 and 3.0 are the same number.
  return (a.is_number() && b.is_number()) ? a.get<double>() == b.get<double>() : a == b;
}

// optim's two spellings of AdamW compute the same steps from the same saved
// state (optim/fused_adamw.hpp): a run may resume with either.
nlohmann::json comparable(const std::string& key, const nlohmann::json& v) {
  return key == "optim" && v == "adamw_torch_fused" ? nlohmann::json("adamw_torch") : v;
}

}  // namespace

std::vector<std::string> resume_argument_differences(const fs::path& checkpoint,
                                                     const nlohmann::json& run_arguments) {
  const fs::path file = checkpoint / kTrainingArgsFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) return {};
  nlohmann::json saved = read_json_object(file, "training arguments");
  // Trainhook's own arguments sit beside HF's (older checkpoints have one file).
  if (const fs::path ours = checkpoint / kTrainhookArgsFile; fs::exists(ours, ec)) {
    const nlohmann::json more = read_json_object(ours, "training arguments");
    for (auto it = more.begin(); it != more.end(); ++it) saved[it.key()] = it.value();
  }
  std::vector<std::string> differences;
  for (const char* key : kRunKeys) {
    const auto it = saved.find(key);
    if (it == saved.end()) continue;  // an older file: nothing to compare
    const nlohmann::json& current = run_arguments.contains(key) ? run_arguments[key] : nlohmann::json();
    if (!same_value(comparable(key, *it), comparable(key, current)))
      differences.push_back(std::string(key) + ": " + shown(*it) + " in the checkpoint, " + shown(current) +
                            " now");
  }
  return differences;
}

std::vector<std::string> check_resume_compatibility(const fs::path& checkpoint,
                                                    const nlohmann::json& run_arguments,
                                                    bool found_automatically) {
  std::vector<std::string> differences = resume_argument_differences(checkpoint, run_arguments);
  if (differences.empty() || !found_automatically) return differences;
  throw std::runtime_error("found " + checkpoint.string() +
                           " in output_dir, but it was written by a run with other arguments (" +
                           strings::join(differences, "; ") +
                           "), so it is not this run's checkpoint; to continue it anyway pass "
                           "--resume_from_checkpoint " +
                           checkpoint.string() + ", or to train from scratch pass --overwrite_output_dir");
}

std::vector<std::string> model_config_differences(const fs::path& folder,
                                                  const std::string& model_config_json) {
  const fs::path file = folder / kModelConfigFile;
  std::error_code ec;
  if (model_config_json.empty() || !fs::exists(file, ec)) return {};
  const nlohmann::json saved = read_json_object(file, "model arguments");
  const nlohmann::json now = nlohmann::json::parse(model_config_json);
  std::vector<std::string> differences;
  for (auto it = now.begin(); it != now.end(); ++it) {
    const auto s = saved.find(it.key());
    const nlohmann::json before = s == saved.end() ? nlohmann::json() : *s;
    if (!same_value(before, it.value()))
      differences.push_back(it.key() + ": " + shown(before) + " saved, " + shown(it.value()) + " now (--" +
                            it.key() + ")");
  }
  return differences;
}

void check_model_config(const fs::path& folder, const std::string& model_config_json) {
  const std::vector<std::string> differences = model_config_differences(folder, model_config_json);
  if (differences.empty()) return;
  throw std::runtime_error(folder.string() + " holds a model built with other arguments (" +
                           strings::join(differences, "; ") +
                           "); give the model arguments it was saved with to continue from it, or "
                           "--overwrite_output_dir to train a new model from scratch");
}

}  // namespace trainhook
