#include <trainhook/trainer/evaluate_only_model.hpp>

#include <trainhook/checkpoint/checkpoint_io.hpp>

#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace trainhook {

std::filesystem::path evaluate_only_model(const TrainingArguments& args) {
  std::error_code ec;
  if (args.resume_from_checkpoint) {
    const std::string& given = *args.resume_from_checkpoint;
    if (given == "true")
      throw std::runtime_error(
          "--resume_from_checkpoint true continues training from the latest checkpoint, but this run does "
          "not train (no --do_train); to evaluate a checkpoint give its folder (--resume_from_checkpoint " +
          (fs::path(args.output_dir) / "checkpoint-<step>").string() +
          "), or leave the flag out to evaluate "
          "the final model in output_dir");
    const fs::path path(given);
    const fs::path file = fs::is_directory(path, ec) ? path / kModelFile : path;
    if (!fs::is_regular_file(file, ec))
      throw std::runtime_error("--resume_from_checkpoint " + given + ": no model to evaluate (" +
                               file.string() + " is missing)");
    return file;
  }
  const fs::path final_model = fs::path(args.output_dir) / kModelFile;
  if (!fs::is_regular_file(final_model, ec))
    throw std::runtime_error(
        "evaluation without --do_train needs a trained model, but output_dir '" + args.output_dir +
        "' has no " + kModelFile +
        "; train first (--do_train), or give a checkpoint with --resume_from_checkpoint PATH");
  return final_model;
}

}  // namespace trainhook
